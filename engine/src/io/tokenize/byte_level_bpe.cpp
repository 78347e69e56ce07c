#include "io/tokenize/byte_level_bpe.h"

#include "base/api/strict_json.h"
#include "io/tokenize/bpe_merge.h"
#include "io/tokenize/byte_level.h"
#include "io/tokenize/nfc_text.h"
#include "io/tokenize/sanitized_text.h"

#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <array>
#include <limits>
#include <new>
#include <unordered_map>
#include <utility>

namespace attnscope::engine {

namespace {

/// openai/gpt-2 encoder.py. Case-sensitive on purpose: "'S" is not a contraction there.
/// NOTE: `[\s]` instead of `\s` in the last two alternatives: both are the White_Space property
/// in ICU 72 (checked over every code point), but ICU keeps one backtracking state per character
/// for `\s+` and only one in all for `[\s]+`, so 1 MiB of white space overflowed its 8 MB stack.
constexpr char kGpt2Pattern[] = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|[\s]+(?!\S)|[\s]+)";

/// Pre-tokens longer than this are merged in parts of at most this many bytes (cut at character
/// boundaries), which bounds the time and memory of one merge and lets cancel act between parts.
/// The reference would merge across a cut; no natural text has a 64 KiB run of letters.
constexpr std::int64_t kMaxPieceBytes = 64 << 10;

/// Pieces up to this length are cached per encode() call; longer ones are rare and would only
/// bloat the cache.
constexpr std::size_t kMaxCachedPieceBytes = 256;
constexpr std::size_t kMaxCacheEntries = 1 << 16;

Error invalid(std::string message) { return makeError(ErrorCode::InvalidInput, std::move(message)); }

/// `\s+` and `\s*` outside brackets become `[\s]+` and `[\s]*`: the same set, but ICU then keeps
/// one backtracking state for the run instead of one per character (see kGpt2Pattern).
std::string withBracketedSpaces(const std::string& pattern) {
    std::string out;
    bool inClass = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const bool run = !inClass && pattern[i + 1] == 's' && i + 2 < pattern.size() && (pattern[i + 2] == '+' || pattern[i + 2] == '*');
            out += run ? std::string("[\\s]") : pattern.substr(i, 2);
            ++i;
            continue;
        }
        if (c == '[') inClass = true;
        if (c == ']') inClass = false;
        out += c;
    }
    return out;
}

/// Offsets of the text the tokenizer works on (NFC-normalized sanitized input) in the input.
struct WorkText {
    const SanitizedText& sanitized;
    const NfcText& normalized;
    const std::string& text() const { return normalized.text(); }
    std::int64_t inputBegin(std::int64_t pos) const { return sanitized.inputBegin(normalized.sourceBegin(pos)); }
    std::int64_t inputEnd(std::int64_t pos) const { return sanitized.inputEnd(normalized.sourceEnd(pos)); }
};

class ByteLevelBpeTokenizer final : public VocabTokenizer {
public:
    ByteLevelBpeTokenizer(ByteLevelBpeData data, BpeMerger merger, std::array<std::int32_t, 256> byteIds,
                          std::vector<std::unique_ptr<icu::RegexPattern>> patterns)
        : VocabTokenizer(std::move(data.vocab), std::move(data.notices)), m_options(std::move(data.options)),
          m_merger(std::move(merger)), m_byteIds(byteIds), m_patterns(std::move(patterns)) {}

    ModelTokenizerKind kind() const override { return ModelTokenizerKind::ByteLevelBpe; }
    std::string decode(const std::vector<std::int64_t>& ids) const override {
        std::string joined;
        for (const std::int64_t id : ids) joined += m_vocab.at(id);
        const std::string bytes = ByteLevelTable::instance().decodeToBytes(joined);
        const SanitizedText sanitized(bytes);
        return sanitized.text();
    }

private:
    /// One call's encoded pieces by text, and the last piece too long to be kept.
    struct PieceCache {
        std::unordered_map<std::string, std::vector<BpeSymbol>> pieces;
        std::vector<BpeSymbol> uncached;
    };

    Result<EncodedText> encodeChecked(const std::string& text, bool addSpecialTokens,
                                      const ProgressFn& progress) const override {
        const SanitizedText sanitized(text);
        const NfcText normalized(sanitized.text(), m_options.nfc);
        const WorkText input{sanitized, normalized};
        const std::string& work = input.text();
        EncodedText out;
        if (const std::string notice = sanitized.notice(); !notice.empty()) out.notices.push_back(notice);

        const std::vector<TextSegment> segments =
            textSegments(work, m_options.recognizeSpecialTokensInText, m_options.specialTokens, m_vocab);

        ProgressTicker ticker(progress, static_cast<std::int64_t>(text.size()));
        PieceCache cache;
        for (const TextSegment& seg : segments) {
            if (seg.specialId >= 0) {
                pushToken(out, seg.specialId, m_vocab.at(seg.specialId), input.inputBegin(seg.begin), input.inputEnd(seg.end), true);
                continue;
            }
            if (auto error = encodeSegment(input, seg, ticker, cache, out)) return *error;
        }
        if (!ticker.finish()) return cancelledTokenizing(static_cast<std::int64_t>(text.size()),
                                                         static_cast<std::int64_t>(text.size()));
        if (!addSpecialTokens) return out;
        return applyTemplate(m_options.singleTemplate, std::move(out), static_cast<std::int64_t>(text.size()));
    }

    /// Pre-tokenizes one plain segment and appends its BPE tokens.
    std::optional<Error> encodeSegment(const WorkText& input, const TextSegment& seg, ProgressTicker& ticker,
                                       PieceCache& cache, EncodedText& out) const {
        const std::string& work = input.text();
        const auto segBegin = static_cast<std::size_t>(seg.begin);
        const auto segLength = static_cast<std::size_t>(seg.end - seg.begin);
        // HF ByteLevel(add_prefix_space) checks for a plain space only.
        const std::int64_t prefix = m_options.addPrefixSpace && work[segBegin] != ' ' ? 1 : 0;
        std::string local;
        if (prefix != 0) {
            local.reserve(segLength + 1);
            local += ' ';
            local.append(work, segBegin, segLength);
        }
        const char* bytes = prefix != 0 ? local.data() : work.data() + segBegin;
        const auto size = static_cast<std::int64_t>(segLength) + prefix;

        // Piece offsets are relative to `bytes`; the prefix space maps to the segment start.
        // Returns false when cancelled between the parts of an over-long piece.
        auto emitPiece = [&](std::int64_t pieceBegin, std::int64_t pieceEnd) {
            while (pieceBegin < pieceEnd) {
                std::int64_t partEnd = pieceEnd;
                if (partEnd - pieceBegin > kMaxPieceBytes) {
                    partEnd = pieceBegin + kMaxPieceBytes;
                    while ((static_cast<unsigned char>(bytes[partEnd]) & 0xC0) == 0x80) --partEnd;
                }
                const std::vector<BpeSymbol>& symbols = encodePiece(bytes + pieceBegin, partEnd - pieceBegin, cache);
                for (const BpeSymbol& s : symbols) {
                    const std::int64_t b = std::max<std::int64_t>(0, pieceBegin + s.begin - prefix) + seg.begin;
                    const std::int64_t e =
                        std::max<std::int64_t>(0, pieceBegin + s.begin + s.length - prefix) + seg.begin;
                    pushToken(out, s.id, m_vocab.at(s.id), input.inputBegin(b), input.inputEnd(e), false);
                }
                pieceBegin = partEnd;
                if (pieceBegin < pieceEnd && !ticker.at(seg.begin + pieceBegin)) return false;
            }
            return true;
        };

        if (!m_options.useRegex) {
            if (!emitPiece(0, size) || !ticker.at(seg.end)) return cancelledTokenizing(seg.end, ticker.total());
            return std::nullopt;
        }

        const icu::UnicodeString utf16 =
            icu::UnicodeString::fromUTF8(icu::StringPiece(bytes, static_cast<std::int32_t>(size)));
        // utf16ToByte[i]: byte offset of UTF-16 unit i (valid at code point starts and the end).
        std::vector<std::int32_t> utf16ToByte(static_cast<std::size_t>(utf16.length()) + 1);
        {
            std::int32_t byte = 0;
            std::int32_t unit = 0;
            while (unit < utf16.length()) {
                const UChar32 c = utf16.char32At(unit);
                utf16ToByte[static_cast<std::size_t>(unit)] = byte;
                byte += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
                unit += U16_LENGTH(c);
            }
            utf16ToByte[static_cast<std::size_t>(unit)] = byte;
        }

        if (m_patterns.size() > 1) {
            auto pieces = chainedPieces(utf16);
            if (!pieces) return pieces.error();
            for (const auto& [start, end] : pieces.value()) {
                const std::int64_t pieceBegin = utf16ToByte[static_cast<std::size_t>(start)];
                if (!ticker.at(seg.begin + pieceBegin) || !emitPiece(pieceBegin, utf16ToByte[static_cast<std::size_t>(end)]))
                    return cancelledTokenizing(seg.begin + pieceBegin, ticker.total());
            }
            return std::nullopt;
        }
        UErrorCode status = U_ZERO_ERROR;
        std::unique_ptr<icu::RegexMatcher> matcher(m_patterns.front()->matcher(utf16, status));
        if (U_FAILURE(status)) return makeError(ErrorCode::Internal, std::string("regex matcher: ") + u_errorName(status));
        while (matcher->find(status) && U_SUCCESS(status)) {
            const std::int32_t start = matcher->start(status);
            const std::int32_t end = matcher->end(status);
            if (U_FAILURE(status) || end <= start) break;
            const std::int64_t pieceBegin = utf16ToByte[static_cast<std::size_t>(start)];
            if (!ticker.at(seg.begin + pieceBegin)) return cancelledTokenizing(seg.begin + pieceBegin, ticker.total());
            if (!emitPiece(pieceBegin, utf16ToByte[static_cast<std::size_t>(end)]))
                return cancelledTokenizing(seg.begin + pieceBegin, ticker.total());
        }
        if (U_FAILURE(status)) return makeError(ErrorCode::Internal, std::string("regex: ") + u_errorName(status));
        return std::nullopt;
    }

    /// Several Splits (DeepSeek's): each pattern splits every piece the one before left, each
    /// match and each stretch between matches its own piece (Isolated), the pattern seeing the
    /// piece alone; UTF-16 ranges of `utf16`.
    Result<std::vector<std::pair<std::int32_t, std::int32_t>>> chainedPieces(const icu::UnicodeString& utf16) const {
        std::vector<std::pair<std::int32_t, std::int32_t>> pieces{{0, utf16.length()}}, next;
        for (const auto& pattern : m_patterns) {
            UErrorCode status = U_ZERO_ERROR;
            std::unique_ptr<icu::RegexMatcher> matcher(pattern->matcher(utf16, status));
            if (U_FAILURE(status)) return makeError(ErrorCode::Internal, std::string("regex matcher: ") + u_errorName(status));
            next.clear();
            for (const auto& [begin, end] : pieces) {
                matcher->region(begin, end, status);  // (opaque, anchoring bounds: the piece alone)
                std::int32_t at = begin;
                while (matcher->find(status) && U_SUCCESS(status)) {
                    const std::int32_t start = matcher->start(status), stop = matcher->end(status);
                    if (stop <= start) continue;
                    if (start > at) next.emplace_back(at, start);
                    next.emplace_back(start, stop);
                    at = stop;
                }
                if (U_FAILURE(status)) return makeError(ErrorCode::Internal, std::string("regex: ") + u_errorName(status));
                if (at < end) next.emplace_back(at, end);
            }
            pieces.swap(next);
        }
        return pieces;
    }

    const std::vector<BpeSymbol>& encodePiece(const char* bytes, std::int64_t length, PieceCache& cache) const {
        const bool cacheable = static_cast<std::size_t>(length) <= kMaxCachedPieceBytes;
        std::string key;
        if (cacheable) {
            key.assign(bytes, static_cast<std::size_t>(length));
            const auto it = cache.pieces.find(key);
            if (it != cache.pieces.end()) return it->second;
            if (cache.pieces.size() >= kMaxCacheEntries) cache.pieces.clear();
        }
        std::vector<BpeSymbol> symbols;
        bool whole = false;
        if (m_options.ignoreMerges) {
            std::string mapped;
            for (std::int64_t i = 0; i < length; ++i)
                mapped += ByteLevelTable::instance().toUtf8(static_cast<unsigned char>(bytes[i]));
            const std::int64_t id = m_vocab.find(mapped);
            if (id >= 0) {
                symbols.push_back(BpeSymbol{static_cast<std::int32_t>(id), 0, static_cast<std::int32_t>(length)});
                whole = true;
            }
        }
        if (!whole) {
            symbols.resize(static_cast<std::size_t>(length));
            for (std::int64_t i = 0; i < length; ++i)
                symbols[static_cast<std::size_t>(i)] =
                    BpeSymbol{m_byteIds[static_cast<unsigned char>(bytes[i])], static_cast<std::int32_t>(i), 1};
            m_merger.merge(symbols);
        }
        if (!cacheable) {
            cache.uncached = std::move(symbols);
            return cache.uncached;
        }
        return cache.pieces.emplace(std::move(key), std::move(symbols)).first->second;
    }

    ByteLevelBpeOptions m_options;
    BpeMerger m_merger;
    std::array<std::int32_t, 256> m_byteIds;
    std::vector<std::unique_ptr<icu::RegexPattern>> m_patterns;  ///< one, or DeepSeek's several in turn
};

}  // namespace

Result<Vocab> vocabFromJsonObject(const nlohmann::json& object, const std::string& where) {
    if (!object.is_object()) return invalid(where + ": expected a JSON object {token: id}");
    if (object.empty()) return invalid(where + ": the vocabulary is empty");
    std::int64_t maxId = -1;
    for (const auto& [token, value] : object.items()) {
        if (!value.is_number_unsigned())
            return invalid(where + ": the id of " + quoteForMessage(token) + " is not a non-negative integer");
        const auto id = value.get<std::uint64_t>();
        if (id > static_cast<std::uint64_t>(kMaxVocabularyId))
            return invalid(where + ": id " + std::to_string(id) + " of " + quoteForMessage(token) + " is above " +
                           std::to_string(kMaxVocabularyId));
        if (auto error = checkVocabString(token, where + " token " + quoteForMessage(token))) return *error;
        maxId = std::max(maxId, static_cast<std::int64_t>(id));
    }
    Vocab vocab;
    vocab.tokens.resize(static_cast<std::size_t>(maxId + 1));
    std::vector<bool> used(static_cast<std::size_t>(maxId + 1), false);
    vocab.ids.reserve(object.size());
    for (const auto& [token, value] : object.items()) {
        const auto id = static_cast<std::size_t>(value.get<std::uint64_t>());
        if (used[id])
            return invalid(where + ": id " + std::to_string(id) + " is given to both " +
                           quoteForMessage(vocab.tokens[id]) + " and " + quoteForMessage(token));
        used[id] = true;
        vocab.tokens[id] = token;
        vocab.ids.emplace(token, static_cast<std::int64_t>(id));
    }
    return vocab;
}

Result<Vocab> parseBpeVocabJson(std::string text, const std::string& source) {
    if (auto error = sniffTokenizerFile(text, source)) return *error;
    auto json = parseStrictJson(text, source);
    if (!json) return json.error();
    return vocabFromJsonObject(json.value(), source);
}

Result<std::vector<MergeRule>> parseMergesText(std::string text, const std::string& source,
                                               std::vector<std::string>& notices) {
    // A merges file with no merges at all is legal: the model is then byte-level only.
    if (auto error = sniffTokenizerFile(text, source, true)) return *error;
    std::vector<MergeRule> merges;
    bool sawCr = false;
    std::size_t lineStart = 0;
    std::int64_t lineNumber = 0;
    std::int64_t blankLine = 0;  ///< first blank line seen, 0 = none yet
    while (lineStart < text.size()) {
        std::size_t lineEnd = text.find('\n', lineStart);
        if (lineEnd == std::string::npos) lineEnd = text.size();
        std::string line = text.substr(lineStart, lineEnd - lineStart);
        lineStart = lineEnd + 1;
        ++lineNumber;
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
            sawCr = true;
        }
        if (lineNumber == 1 && line.rfind("#version", 0) == 0) continue;
        if (line.empty()) {
            if (blankLine == 0) blankLine = lineNumber;
            continue;
        }
        const std::string where = source + " line " + std::to_string(lineNumber);
        if (blankLine != 0)
            return invalid(source + " line " + std::to_string(blankLine) + ": blank line before the last merge");
        const std::size_t space = line.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 >= line.size() ||
            line.find(' ', space + 1) != std::string::npos)
            return invalid(where + ": expected two tokens separated by one space, found " + quoteForMessage(line));
        merges.push_back(MergeRule{line.substr(0, space), line.substr(space + 1), where});
    }
    if (sawCr) notices.push_back(source + " has CRLF line ends; the CR characters were ignored");
    return merges;
}

Result<std::shared_ptr<const ModelTokenizer>> buildByteLevelBpeTokenizer(ByteLevelBpeData data) {
    const std::string& vocabSource = data.options.vocabSource;
    if (data.vocab.tokens.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        return invalid(vocabSource + ": too many ids");
    const ByteLevelTable& table = ByteLevelTable::instance();
    std::array<std::int32_t, 256> byteIds{};
    for (int b = 0; b < 256; ++b) {
        const std::string& symbol = table.toUtf8(static_cast<unsigned char>(b));
        const std::int64_t id = data.vocab.find(symbol);
        if (id < 0)
            return invalid(vocabSource + ": the byte-level symbol " + quoteForMessage(symbol) + " (byte " +
                           std::to_string(b) + ") is missing; every one of the 256 byte symbols must be in the vocabulary");
        byteIds[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(id);
    }

    BpeMerger merger;
    std::int32_t rank = 0;
    for (const MergeRule& m : data.merges) {
        const std::int64_t left = data.vocab.find(m.left);
        const std::int64_t right = data.vocab.find(m.right);
        const std::int64_t merged = data.vocab.find(m.left + m.right);
        const std::string* missing = left < 0 ? &m.left : right < 0 ? &m.right : nullptr;
        if (missing != nullptr)
            return invalid(m.where + ": merge part " + quoteForMessage(*missing) + " is not in " + vocabSource);
        if (merged < 0)
            return invalid(m.where + ": merge result " + quoteForMessage(m.left + m.right) + " is not in " + vocabSource);
        merger.addMerge(static_cast<std::int32_t>(left), static_cast<std::int32_t>(right),
                        static_cast<std::int32_t>(merged), rank++);
    }

    auto resolved = resolveTemplate(std::move(data.options.singleTemplate), data.vocab, vocabSource);
    if (!resolved) return resolved.error();
    data.options.singleTemplate = std::move(resolved).value();

    const bool own = !data.options.splitPatterns.empty();
    const std::vector<std::string> sources = own ? data.options.splitPatterns : std::vector<std::string>{kGpt2Pattern};
    std::vector<std::unique_ptr<icu::RegexPattern>> patterns;
    for (const std::string& source : sources) {
        UErrorCode status = U_ZERO_ERROR;
        UParseError parseError{};
        std::unique_ptr<icu::RegexPattern> pattern(icu::RegexPattern::compile(
            icu::UnicodeString::fromUTF8(own ? withBracketedSpaces(source) : source), 0, parseError, status));
        if (own && (U_FAILURE(status) || !pattern))
            return invalid(vocabSource + ": the pre-tokenizer's Split regex does not compile (" + u_errorName(status) + " at offset " +
                           std::to_string(parseError.offset) + ")");
        if (U_FAILURE(status) || !pattern)
            return makeError(ErrorCode::Internal, std::string("GPT-2 pre-tokenizer regex: ") + u_errorName(status));
        patterns.push_back(std::move(pattern));
    }
    return std::shared_ptr<const ModelTokenizer>(
        std::make_shared<ByteLevelBpeTokenizer>(std::move(data), std::move(merger), byteIds, std::move(patterns)));
}

Result<std::shared_ptr<const ModelTokenizer>> makeByteLevelBpeTokenizer(const std::string& encoderJson,
                                                                        const std::string& mergesText,
                                                                        const ByteLevelBpeOptions& options) {
    ByteLevelBpeData data;
    data.options = options;
    auto vocab = parseBpeVocabJson(encoderJson, options.vocabSource);
    if (!vocab) return vocab.error();
    data.vocab = std::move(vocab).value();
    auto merges = parseMergesText(mergesText, options.mergesSource, data.notices);
    if (!merges) return merges.error();
    data.merges = std::move(merges).value();
    return buildByteLevelBpeTokenizer(std::move(data));
}

}  // namespace attnscope::engine
