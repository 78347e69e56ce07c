#pragma once
// Pieces shared by the WordPiece and byte-level BPE tokenizers: the vocabulary, special tokens
// typed in the text, the post-processing template, progress, and sniffing of tokenizer files.

#include <attnscope/model_tokenizer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnscope::engine {

/// Ids above this are refused before anything is allocated (the largest real vocabularies have
/// about 260k entries).
constexpr std::int64_t kMaxVocabularyId = 16'000'000;

struct Vocab {
    std::vector<std::string> tokens;                      ///< id → string ("" for holes)
    std::unordered_map<std::string, std::int64_t> ids;    ///< string → id
    std::int64_t find(const std::string& token) const {
        const auto it = ids.find(token);
        return it == ids.end() ? -1 : it->second;
    }
    std::string at(std::int64_t id) const {
        return id >= 0 && id < static_cast<std::int64_t>(tokens.size()) ? tokens[static_cast<std::size_t>(id)]
                                                                         : std::string();
    }
};

/// What both model tokenizers share: the vocabulary, the load notices, and encode()'s size check
/// and out-of-memory boundary around each tokenizer's own encodeChecked().
class VocabTokenizer : public ModelTokenizer {
public:
    VocabTokenizer(Vocab vocab, std::vector<std::string> notices)
        : m_vocab(std::move(vocab)), m_notices(std::move(notices)) {}

    std::int64_t vocabSize() const override { return static_cast<std::int64_t>(m_vocab.tokens.size()); }
    std::string tokenString(std::int64_t id) const override { return m_vocab.at(id); }
    std::int64_t tokenId(const std::string& token) const override { return m_vocab.find(token); }
    const std::vector<std::string>& loadNotices() const override { return m_notices; }
    Result<EncodedText> encode(const std::string& text, bool addSpecialTokens,
                               const ProgressFn& progress) const override;

protected:
    /// encode() once the text's size is known to be acceptable.
    virtual Result<EncodedText> encodeChecked(const std::string& text, bool addSpecialTokens,
                                              const ProgressFn& progress) const = 0;

    Vocab m_vocab;
    std::vector<std::string> m_notices;
};

/// A stretch of the (sanitized) text: plain text, or a special token typed in it.
struct TextSegment {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    std::int64_t specialId = -1;  ///< -1: plain text
};

/// Splits `text` at every occurrence of a special token (leftmost first, the longest on a tie).
/// Tokens absent from `vocab` are ignored.
std::vector<TextSegment> splitOnSpecialTokens(const std::string& text, const std::vector<std::string>& specials,
                                              const Vocab& vocab);

/// The segments encode() works through: split at typed special tokens when `recognize`, else the
/// whole (non-empty) text as one plain segment.
std::vector<TextSegment> textSegments(const std::string& text, bool recognize, const std::vector<std::string>& specials,
                                      const Vocab& vocab);

/// Looks up template ids that are -1; the error names `source` and the missing token.
Result<std::vector<TemplateItem>> resolveTemplate(std::vector<TemplateItem> items, const Vocab& vocab,
                                                  const std::string& source);

/// Wraps `body` in the template; specials before the sequence get span [0, 0), after it
/// [textSize, textSize).
EncodedText applyTemplate(const std::vector<TemplateItem>& items, EncodedText body, std::int64_t textSize);

/// Appends one token to `out`.
void pushToken(EncodedText& out, std::int64_t id, std::string text, std::int64_t begin, std::int64_t end,
               bool special, std::int64_t typeId = 0);

/// Calls the progress function about every 64 KiB of input; false once it asked to cancel.
class ProgressTicker {
public:
    ProgressTicker(const ProgressFn& progress, std::int64_t total) : m_progress(progress), m_total(total) {}
    bool at(std::int64_t done) {
        if (!m_progress || done < m_next) return true;
        m_next = done + kStep;
        return m_progress(Progress{"tokenize", done, m_total});
    }
    bool finish() { return !m_progress || m_progress(Progress{"tokenize", m_total, m_total}); }
    std::int64_t total() const { return m_total; }

private:
    static constexpr std::int64_t kStep = 64 << 10;
    const ProgressFn& m_progress;
    std::int64_t m_total;
    std::int64_t m_next = kStep;
};

Error cancelledTokenizing(std::int64_t done, std::int64_t total);
/// InvalidArgument when the text is over kMaxModelTokenizerTextBytes.
std::optional<Error> checkTextSize(const std::string& text);

/// Refuses tokenizer file contents that are clearly something else: a Git LFS pointer, an HTML
/// page, a NUL byte, invalid UTF-8, or nothing at all (unless `emptyOk`). Strips a UTF-8
/// byte-order mark.
std::optional<Error> sniffTokenizerFile(std::string& text, const std::string& source, bool emptyOk = false);

/// Checks a string read from a tokenizer file: valid UTF-8 and no NUL.
std::optional<Error> checkVocabString(const std::string& token, const std::string& where);

/// Quoted for messages: at most 40 bytes, control bytes escaped.
std::string quoteForMessage(const std::string& text);

}  // namespace attnscope::engine
