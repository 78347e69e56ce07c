#include "io/tokenize/metaspace_bpe.h"

#include "io/tokenize/bpe_merge.h"
#include "io/tokenize/sanitized_text.h"
#include "io/tokenize/utf8.h"

#include <array>
#include <limits>
#include <optional>
#include <utility>

namespace attnscope::engine {

namespace {

/// Pieces longer than this are merged in parts cut at character boundaries, which bounds one
/// merge's time and memory and lets cancel act between parts. Without a pre-tokenizer a whole
/// stretch of text is one piece, so this does happen for long inputs; a merge never spans more
/// than one word's few bytes, so only a token straddling a cut can differ from the reference.
constexpr std::int64_t kMaxPieceBytes = 64 << 10;

Error invalid(std::string message) { return makeError(ErrorCode::InvalidInput, std::move(message)); }

/// "<0x41>" → 0x41; -1 for anything else.
int byteTokenValue(const std::string& token) {
    if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
    int value = 0;
    for (int i = 3; i < 5; ++i) {
        const char c = token[static_cast<std::size_t>(i)];
        const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit < 0) return -1;
        value = value * 16 + digit;
    }
    return value;
}

std::string byteTokenName(unsigned char byte) {
    static const char* const hex = "0123456789ABCDEF";
    return std::string("<0x") + hex[byte >> 4] + hex[byte & 15] + ">";
}

/// One stretch of text after the Metaspace normalisation, with the span of the sanitized text
/// each of its bytes came from (a prepended "▁" has the empty span at the stretch's start, a
/// "▁" that replaced a space has that space's span).
struct NormalizedStretch {
    std::string text;
    std::vector<std::int64_t> begin;
    std::vector<std::int64_t> end;

    void append(const std::string& bytes, std::int64_t from, std::int64_t to) {
        text += bytes;
        begin.insert(begin.end(), bytes.size(), from);
        end.insert(end.end(), bytes.size(), to);
    }
};

class MetaspaceBpeTokenizer final : public VocabTokenizer {
public:
    MetaspaceBpeTokenizer(MetaspaceBpeData data, BpeMerger merger, std::array<std::int32_t, 256> byteIds,
                          std::int64_t unkId)
        : VocabTokenizer(std::move(data.vocab), {}), m_options(std::move(data.options)),
          m_special(std::move(data.special)), m_merger(std::move(merger)), m_byteIds(byteIds), m_unkId(unkId) {}

    ModelTokenizerKind kind() const override { return ModelTokenizerKind::SentencePiece; }

    // As the files' decoder (Replace "▁" → " ", ByteFallback, Fuse, Strip one leading space):
    // special tokens left out, byte tokens back to their bytes, invalid UTF-8 replaced.
    std::string decode(const std::vector<std::int64_t>& ids) const override {
        std::string bytes;
        for (const std::int64_t id : ids) {
            if (id < 0 || id >= vocabSize()) continue;
            if (static_cast<std::size_t>(id) < m_special.size() && m_special[static_cast<std::size_t>(id)]) continue;
            const std::string& piece = m_vocab.tokens[static_cast<std::size_t>(id)];
            if (const int value = byteTokenValue(piece); value >= 0) {
                bytes += static_cast<char>(value);
                continue;
            }
            for (std::size_t i = 0; i < piece.size();) {
                if (piece.compare(i, m_options.replacement.size(), m_options.replacement) == 0) {
                    bytes += ' ';
                    i += m_options.replacement.size();
                } else {
                    bytes += piece[i++];
                }
            }
        }
        if (!bytes.empty() && bytes.front() == ' ') bytes.erase(0, 1);
        const SanitizedText sanitized(bytes);
        return sanitized.text();
    }

private:
    Result<EncodedText> encodeChecked(const std::string& text, bool addSpecialTokens,
                                      const ProgressFn& progress) const override {
        const SanitizedText sanitized(text);
        const std::string& work = sanitized.text();
        EncodedText out;
        if (const std::string notice = sanitized.notice(); !notice.empty()) out.notices.push_back(notice);
        ProgressTicker ticker(progress, static_cast<std::int64_t>(text.size()));
        for (const TextSegment& seg : textSegments(work, true, m_options.specialTokens, m_vocab)) {
            if (seg.specialId >= 0) {
                pushToken(out, seg.specialId, m_vocab.at(seg.specialId), sanitized.inputBegin(seg.begin),
                          sanitized.inputEnd(seg.end), true);
                continue;
            }
            if (auto error = encodeStretch(sanitized, seg, ticker, out)) return *error;
        }
        if (!ticker.finish()) return cancelledTokenizing(ticker.total(), ticker.total());
        if (!addSpecialTokens) return out;
        return applyTemplate(m_options.singleTemplate, std::move(out), static_cast<std::int64_t>(text.size()));
    }

    NormalizedStretch normalize(const std::string& work, const TextSegment& seg) const {
        NormalizedStretch n;
        n.text.reserve(static_cast<std::size_t>(seg.end - seg.begin) + m_options.replacement.size());
        const bool startsWithReplacement = work[static_cast<std::size_t>(seg.begin)] == ' ' ||
                                           work.compare(static_cast<std::size_t>(seg.begin), m_options.replacement.size(),
                                                        m_options.replacement) == 0;
        const MetaspacePrepend scheme = m_options.prepend;
        const bool prepend = scheme == MetaspacePrepend::Always ||
                             (scheme == MetaspacePrepend::IfMissing && !startsWithReplacement) ||
                             (scheme == MetaspacePrepend::First && seg.begin == 0 && !startsWithReplacement);
        if (prepend) n.append(m_options.replacement, seg.begin, seg.begin);
        for (std::int64_t p = seg.begin; p < seg.end; ++p) {
            const char c = work[static_cast<std::size_t>(p)];
            if (c == ' ') n.append(m_options.replacement, p, p + 1);
            else n.append(std::string(1, c), p, p + 1);
        }
        return n;
    }

    /// Normalises one stretch between typed special tokens and appends its tokens.
    std::optional<Error> encodeStretch(const SanitizedText& sanitized, const TextSegment& seg, ProgressTicker& ticker,
                                       EncodedText& out) const {
        const NormalizedStretch n = normalize(sanitized.text(), seg);
        const auto size = static_cast<std::int64_t>(n.text.size());
        bool lastWasUnknown = false;
        std::int64_t pieceBegin = 0;
        while (pieceBegin < size) {
            std::int64_t pieceEnd = size;
            if (m_options.splitAtReplacement) {
                const std::size_t next = n.text.find(m_options.replacement, static_cast<std::size_t>(pieceBegin) + 1);
                if (next != std::string::npos) pieceEnd = static_cast<std::int64_t>(next);
            }
            if (pieceEnd - pieceBegin > kMaxPieceBytes) {
                pieceEnd = pieceBegin + kMaxPieceBytes;
                while ((static_cast<unsigned char>(n.text[static_cast<std::size_t>(pieceEnd)]) & 0xC0) == 0x80) --pieceEnd;
            }
            std::vector<BpeSymbol> symbols = mergePiece(n.text, pieceBegin, pieceEnd);
            if (auto error = emit(symbols, pieceBegin, n, sanitized, lastWasUnknown, out)) return *error;
            pieceBegin = pieceEnd;
            const std::int64_t done = n.end[static_cast<std::size_t>(pieceEnd - 1)];
            if (!ticker.at(done)) return cancelledTokenizing(done, ticker.total());
        }
        return std::nullopt;
    }

    /// The piece's characters as symbols (id -1 for a character the vocabulary lacks), merged.
    std::vector<BpeSymbol> mergePiece(const std::string& text, std::int64_t begin, std::int64_t end) const {
        if (m_options.ignoreMerges) {
            const std::int64_t whole = m_vocab.find(text.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)));
            if (whole >= 0) return {BpeSymbol{static_cast<std::int32_t>(whole), 0, static_cast<std::int32_t>(end - begin)}};
        }
        std::vector<BpeSymbol> symbols;
        const auto* data = reinterpret_cast<const unsigned char*>(text.data());
        for (std::int64_t p = begin; p < end;) {
            const Utf8Step step = decodeUtf8(data, static_cast<std::size_t>(end), static_cast<std::size_t>(p));
            const auto length = static_cast<std::int64_t>(step.length > 0 ? step.length : 1);
            const std::int64_t id = m_vocab.find(text.substr(static_cast<std::size_t>(p), static_cast<std::size_t>(length)));
            symbols.push_back(BpeSymbol{static_cast<std::int32_t>(id), static_cast<std::int32_t>(p - begin),
                                        static_cast<std::int32_t>(length)});
            p += length;
        }
        m_merger.merge(symbols);
        return symbols;
    }

    /// Appends the merged symbols: vocabulary tokens as they are, the rest as byte tokens or the
    /// unknown token.
    std::optional<Error> emit(const std::vector<BpeSymbol>& symbols, std::int64_t pieceBegin, const NormalizedStretch& n,
                              const SanitizedText& sanitized, bool& lastWasUnknown, EncodedText& out) const {
        auto spanBegin = [&](std::int64_t byte) { return sanitized.inputBegin(n.begin[static_cast<std::size_t>(byte)]); };
        auto spanEnd = [&](std::int64_t byte) { return sanitized.inputEnd(n.end[static_cast<std::size_t>(byte)]); };
        for (const BpeSymbol& s : symbols) {
            const std::int64_t first = pieceBegin + s.begin;
            const std::int64_t last = first + s.length - 1;
            if (s.id >= 0) {
                pushToken(out, s.id, m_vocab.at(s.id), spanBegin(first), spanEnd(last), false);
                lastWasUnknown = false;
                continue;
            }
            bool allBytes = m_options.byteFallback;
            for (std::int64_t b = first; allBytes && b <= last; ++b)
                allBytes = m_byteIds[static_cast<unsigned char>(n.text[static_cast<std::size_t>(b)])] >= 0;
            if (allBytes) {
                for (std::int64_t b = first; b <= last; ++b) {
                    const std::int32_t id = m_byteIds[static_cast<unsigned char>(n.text[static_cast<std::size_t>(b)])];
                    pushToken(out, id, m_vocab.at(id), spanBegin(b), spanEnd(b), false);
                }
                lastWasUnknown = false;
                continue;
            }
            if (m_unkId < 0)
                return invalid(m_options.source + ": the text has " +
                               quoteForMessage(n.text.substr(static_cast<std::size_t>(first), static_cast<std::size_t>(s.length))) +
                               ", which the vocabulary lacks, and the model has no unknown token (unk_token)");
            if (m_options.fuseUnk && lastWasUnknown) {
                out.tokens.back().byteEnd = spanEnd(last);
                continue;
            }
            pushToken(out, m_unkId, m_vocab.at(m_unkId), spanBegin(first), spanEnd(last), false);
            lastWasUnknown = true;
        }
        return std::nullopt;
    }

    MetaspaceBpeOptions m_options;
    std::vector<bool> m_special;
    BpeMerger m_merger;
    std::array<std::int32_t, 256> m_byteIds;
    std::int64_t m_unkId;
};

}  // namespace

Result<std::shared_ptr<const ModelTokenizer>> buildMetaspaceBpeTokenizer(MetaspaceBpeData data) {
    const std::string vocabSource = data.options.source + " $.model.vocab";
    if (data.vocab.tokens.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        return invalid(vocabSource + ": too many ids");
    if (data.options.replacement.empty()) return invalid(data.options.source + ": the Metaspace replacement is empty");

    std::array<std::int32_t, 256> byteIds{};
    for (int b = 0; b < 256; ++b)
        byteIds[static_cast<std::size_t>(b)] =
            static_cast<std::int32_t>(data.vocab.find(byteTokenName(static_cast<unsigned char>(b))));

    std::int64_t unkId = -1;
    if (!data.options.unkToken.empty()) {
        unkId = data.vocab.find(data.options.unkToken);
        if (unkId < 0)
            return invalid(data.options.source + " $.model.unk_token: " + quoteForMessage(data.options.unkToken) +
                           " is not in the vocabulary");
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
                        static_cast<std::int32_t>(merged), m.rank >= 0 ? m.rank : rank);
        ++rank;
    }

    auto resolved = resolveTemplate(std::move(data.options.singleTemplate), data.vocab, vocabSource);
    if (!resolved) return resolved.error();
    data.options.singleTemplate = std::move(resolved).value();
    return std::shared_ptr<const ModelTokenizer>(
        std::make_shared<MetaspaceBpeTokenizer>(std::move(data), std::move(merger), byteIds, unkId));
}

}  // namespace attnscope::engine
