#include "io/tokenize/wordpiece.h"

#include "io/tokenize/bert_pretokenizer.h"
#include "io/tokenize/byte_level.h"
#include "io/tokenize/sanitized_text.h"

#include <algorithm>
#include <array>
#include <new>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace attnscope::engine {

namespace {

/// Longer per-word limits would make greedy matching quadratic in a pathological word.
constexpr std::int64_t kMaxWordCharsLimit = 10'000;
constexpr std::int64_t kChunkBytes = 64 << 10;

/// ASCII punctuation after which a chunk may end: it is a word of its own, neither cased nor
/// case-ignorable (so no Greek final-sigma context reaches across it) and not part of the usual
/// special-token spellings ([X], <x>, <|x|>). Excludes . : ' ^ ` (case-ignorable).
constexpr auto kCutAfter = [] {
    std::array<bool, 128> table{};
    for (const char c : std::string_view(",;!?(){}/\"#$%&*+-=@\\~_")) table[static_cast<unsigned char>(c)] = true;
    return table;
}();

Error invalid(std::string message) { return makeError(ErrorCode::InvalidInput, std::move(message)); }

/// transformers' clean_up_tokenization: no space before common punctuation and contractions.
std::string cleanUpTokenization(std::string text) {
    static const std::pair<const char*, const char*> kRules[] = {
        {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
        {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& [from, to] : kRules) {
        const std::string f = from;
        const std::string t = to;
        std::string out;
        std::size_t pos = 0;
        while (true) {
            const std::size_t hit = text.find(f, pos);
            if (hit == std::string::npos) break;
            out.append(text, pos, hit - pos);
            out += t;
            pos = hit + f.size();
        }
        out.append(text, pos, std::string::npos);
        text.swap(out);
    }
    return text;
}

class WordPieceTokenizer final : public VocabTokenizer {
public:
    WordPieceTokenizer(WordPieceData data, std::int64_t unkId, BertPreTokenizer pre)
        : VocabTokenizer(std::move(data.vocab), std::move(data.notices)), m_options(std::move(data.options)),
          m_unkId(unkId), m_pre(std::move(pre)) {}

    ModelTokenizerKind kind() const override { return ModelTokenizerKind::WordPiece; }
    std::string decode(const std::vector<std::int64_t>& ids) const override {
        const std::string& prefix = m_options.continuingSubwordPrefix;
        std::string out;
        for (const std::int64_t id : ids) {
            if (id < 0 || id >= vocabSize()) continue;
            const std::string& token = m_vocab.tokens[static_cast<std::size_t>(id)];
            if (!prefix.empty() && token.compare(0, prefix.size(), prefix) == 0 && !out.empty()) {
                out.append(token, prefix.size(), std::string::npos);
                continue;
            }
            if (!out.empty()) out += ' ';
            out += token;
        }
        return cleanUpTokenization(std::move(out));
    }

private:
    /// First position at or after `from` where a chunk may end without changing any token: before
    /// ASCII white space, or after a word-separating punctuation character (kCutAfter).
    std::int64_t chunkBoundary(const std::string& work, std::int64_t from, std::int64_t end) const {
        for (std::int64_t i = from; i < end; ++i) {
            const auto c = static_cast<unsigned char>(work[static_cast<std::size_t>(i)]);
            if (c == ' ' || c == '\n' || c == '\t' || c == '\r') return i;
            if (c < 0x80 && kCutAfter[c]) return i + 1;
        }
        return end;
    }

    Result<EncodedText> encodeChecked(const std::string& text, bool addSpecialTokens,
                                      const ProgressFn& progress) const override {
        const SanitizedText sanitized(text);
        const std::string& work = sanitized.text();
        EncodedText out;
        if (const std::string notice = sanitized.notice(); !notice.empty()) out.notices.push_back(notice);

        const std::vector<TextSegment> segments =
            textSegments(work, m_options.recognizeSpecialTokensInText, m_options.neverSplit, m_vocab);

        ProgressTicker ticker(progress, static_cast<std::int64_t>(text.size()));
        std::vector<BertWord> words;
        std::string piece;
        for (const TextSegment& seg : segments) {
            if (seg.specialId >= 0) {
                pushToken(out, seg.specialId, m_vocab.at(seg.specialId), sanitized.inputBegin(seg.begin),
                          sanitized.inputEnd(seg.end), true);
                continue;
            }
            // About 64 KiB per chunk, with progress and cancel between chunks.
            std::int64_t chunkBegin = seg.begin;
            while (chunkBegin < seg.end) {
                const std::int64_t chunkEnd = chunkBoundary(work, std::min(seg.end, chunkBegin + kChunkBytes), seg.end);
                if (!ticker.at(chunkBegin)) return cancelledTokenizing(chunkBegin, ticker.total());
                words.clear();
                m_pre.split(work, chunkBegin, chunkEnd, words);
                for (const BertWord& word : words) encodeWord(word, sanitized, piece, out);
                chunkBegin = chunkEnd;
            }
        }
        if (!ticker.finish()) return cancelledTokenizing(ticker.total(), ticker.total());
        if (!addSpecialTokens) return out;
        return applyTemplate(m_options.singleTemplate, std::move(out), static_cast<std::int64_t>(text.size()));
    }

    void encodeWord(const BertWord& word, const SanitizedText& sanitized, std::string& buffer, EncodedText& out) const {
        const std::int64_t wordBegin = sanitized.inputBegin(word.chars.front().begin);
        const std::int64_t wordEnd = sanitized.inputEnd(word.chars.back().end);
        std::string utf8;
        std::vector<std::size_t> offsets;  // byte offset of each character in utf8, plus the end
        offsets.reserve(word.chars.size() + 1);
        for (const BertChar& c : word.chars) {
            offsets.push_back(utf8.size());
            appendUtf8(utf8, c.codePoint);
        }
        offsets.push_back(utf8.size());

        if (word.neverSplit) {
            const std::int64_t id = m_vocab.find(utf8);
            pushToken(out, id >= 0 ? id : m_unkId, id >= 0 ? utf8 : m_vocab.at(m_unkId), wordBegin, wordEnd, false);
            return;
        }
        const auto n = word.chars.size();
        if (static_cast<std::int64_t>(n) > m_options.maxInputCharsPerWord) {
            pushToken(out, m_unkId, m_vocab.at(m_unkId), wordBegin, wordEnd, false);
            return;
        }

        const std::size_t first = out.tokens.size();
        std::size_t start = 0;
        while (start < n) {
            std::size_t end = n;
            std::int64_t found = -1;
            while (end > start) {
                buffer.clear();
                if (start > 0) buffer += m_options.continuingSubwordPrefix;
                buffer.append(utf8, offsets[start], offsets[end] - offsets[start]);
                found = m_vocab.find(buffer);
                if (found >= 0) break;
                --end;
            }
            if (found < 0) {
                out.tokens.resize(first);
                out.typeIds.resize(first);
                out.special.resize(first);
                pushToken(out, m_unkId, m_vocab.at(m_unkId), wordBegin, wordEnd, false);
                return;
            }
            pushToken(out, found, buffer, sanitized.inputBegin(word.chars[start].begin),
                      sanitized.inputEnd(word.chars[end - 1].end), false);
            start = end;
        }
    }

    WordPieceOptions m_options;
    std::int64_t m_unkId;
    BertPreTokenizer m_pre;
};

}  // namespace

Result<Vocab> parseVocabTxt(std::string text, const std::string& source, std::vector<std::string>& notices) {
    if (auto error = sniffTokenizerFile(text, source)) return *error;
    Vocab vocab;
    std::size_t lines = 0;
    for (const char c : text) lines += c == '\n' ? 1 : 0;
    if (!text.empty() && text.back() != '\n') ++lines;
    if (lines > static_cast<std::size_t>(kMaxVocabularyId))
        return invalid(source + ": " + std::to_string(lines) + " lines, more than the " +
                       std::to_string(kMaxVocabularyId) + " tokens allowed");
    vocab.tokens.reserve(lines);
    vocab.ids.reserve(lines);
    std::size_t crLines = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string token = text.substr(pos, end - pos);
        pos = end + 1;
        // NOTE: transformers strips only "\n", so a CRLF file leaves "\r" in every token and
        // nothing matches; HF tokenizers strips "\r\n". We follow tokenizers and say so.
        if (!token.empty() && token.back() == '\r') {
            token.pop_back();
            ++crLines;
        }
        const auto id = static_cast<std::int64_t>(vocab.tokens.size());
        vocab.ids[token] = id;
        vocab.tokens.push_back(std::move(token));
    }
    if (crLines > 0)
        notices.push_back(source + " has CRLF line ends (" + std::to_string(crLines) +
                          " lines); the CR characters were removed from the tokens");
    if (vocab.ids.size() < vocab.tokens.size())
        notices.push_back(source + " has " + std::to_string(vocab.tokens.size() - vocab.ids.size()) +
                          " duplicate lines; each string keeps the id of its last line");
    return vocab;
}

Result<std::shared_ptr<const ModelTokenizer>> buildWordPieceTokenizer(WordPieceData data) {
    const std::string& source = data.options.source;
    if (data.vocab.tokens.empty()) return invalid(source + ": the vocabulary is empty");
    const std::int64_t unkId = data.vocab.find(data.options.unkToken);
    if (unkId < 0)
        return invalid(source + ": the unknown token " + quoteForMessage(data.options.unkToken) +
                       " is not in the vocabulary (every WordPiece vocabulary needs it)");
    if (data.options.maxInputCharsPerWord < 1 || data.options.maxInputCharsPerWord > kMaxWordCharsLimit)
        return invalid(source + ": max_input_chars_per_word " + std::to_string(data.options.maxInputCharsPerWord) +
                       " is outside 1.." + std::to_string(kMaxWordCharsLimit));
    auto resolved = resolveTemplate(std::move(data.options.singleTemplate), data.vocab, source);
    if (!resolved) return resolved.error();
    data.options.singleTemplate = std::move(resolved).value();

    BertPreTokenizerOptions pre;
    pre.cleanText = data.options.cleanText;
    pre.handleChineseChars = data.options.handleChineseChars;
    pre.lowercase = data.options.lowercase;
    pre.stripAccents = data.options.stripAccents.value_or(data.options.lowercase);
    std::unordered_set<std::string> neverSplit(data.options.neverSplit.begin(), data.options.neverSplit.end());
    BertPreTokenizer preTokenizer(pre, std::move(neverSplit));
    return std::shared_ptr<const ModelTokenizer>(
        std::make_shared<WordPieceTokenizer>(std::move(data), unkId, std::move(preTokenizer)));
}

Result<std::shared_ptr<const ModelTokenizer>> makeWordPieceTokenizer(const std::string& vocabText,
                                                                     const WordPieceOptions& options) {
    WordPieceData data;
    data.options = options;
    auto vocab = parseVocabTxt(vocabText, options.source, data.notices);
    if (!vocab) return vocab.error();
    data.vocab = std::move(vocab).value();
    return buildWordPieceTokenizer(std::move(data));
}

}  // namespace attnscope::engine
