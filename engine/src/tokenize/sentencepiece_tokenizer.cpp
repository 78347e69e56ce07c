#include "tokenize/sentencepiece_tokenizer.h"

#include "tokenize/sanitized_text.h"
#include "tokenize/sentencepiece_library.h"

#include <filesystem>

namespace attnscope::engine {
namespace {

void appendText(void* user, const char* text, std::size_t size) { static_cast<std::string*>(user)->append(text, size); }

class SentencePieceTokenizer final : public ModelTokenizer {
public:
    SentencePieceTokenizer(const SentencePieceLibrary& library, void* processor, std::int64_t bosId, std::int64_t eosId)
        : m_library(library), m_processor(processor), m_pieces(library.pieceSize(processor)), m_bosId(bosId), m_eosId(eosId) {}
    ~SentencePieceTokenizer() override { m_library.free(m_processor); }
    SentencePieceTokenizer(const SentencePieceTokenizer&) = delete;
    SentencePieceTokenizer& operator=(const SentencePieceTokenizer&) = delete;

    ModelTokenizerKind kind() const override { return ModelTokenizerKind::SentencePiece; }
    std::int64_t vocabSize() const override { return m_pieces; }

    Result<EncodedText> encode(const std::string& input, bool addSpecialTokens, const ProgressFn& progress) const override {
        if (input.size() > kMaxModelTokenizerTextBytes)
            return makeError(ErrorCode::InvalidArgument, "the text has " + std::to_string(input.size()) +
                                                             " bytes; the tokenizer takes at most " +
                                                             std::to_string(kMaxModelTokenizerTextBytes));
        if (progress && !progress(Progress{"tokenize", 0, 1})) return makeError(ErrorCode::Cancelled, "cancelled");
        // The library wants valid UTF-8; spans map back to the bytes the user typed.
        const SanitizedText sanitized(input);
        EncodedText out;
        if (!sanitized.notice().empty()) out.notices.push_back(sanitized.notice());
        struct Sink {
            EncodedText* out;
            const SanitizedText* text;
        } sink{&out, &sanitized};
        const auto piece = [](void* user, int id, const char* text, std::size_t size, unsigned begin, unsigned end) {
            auto& s = *static_cast<Sink*>(user);
            Token t;
            t.id = id;
            t.text.assign(text, size);
            t.byteBegin = s.text->inputBegin(begin);
            t.byteEnd = end > begin ? s.text->inputEnd(end) : t.byteBegin;
            s.out->tokens.push_back(std::move(t));
            s.out->special.push_back(false);
        };
        std::string error;
        const std::string& valid = sanitized.text();
        if (m_library.encode(m_processor, valid.data(), valid.size(), piece, &sink, appendText, &error) != 0)
            return makeError(ErrorCode::InvalidInput, "SentencePiece: " + error);
        if (addSpecialTokens && m_bosId >= 0) {
            out.tokens.insert(out.tokens.begin(), special(m_bosId, 0));
            out.special.insert(out.special.begin(), true);
        }
        if (addSpecialTokens && m_eosId >= 0) {
            out.tokens.push_back(special(m_eosId, static_cast<std::int64_t>(input.size())));
            out.special.push_back(true);
        }
        out.typeIds.assign(out.tokens.size(), 0);
        return out;
    }

    std::string decode(const std::vector<std::int64_t>& ids) const override {
        std::vector<int> known;
        for (const std::int64_t id : ids)
            if (id >= 0 && id < m_pieces && !m_library.isControl(m_processor, static_cast<int>(id))) known.push_back(static_cast<int>(id));
        std::string out;
        m_library.decode(m_processor, known.data(), known.size(), appendText, &out);
        return out;
    }
    std::string tokenString(std::int64_t id) const override {
        std::string out;
        if (id >= 0 && id < m_pieces) m_library.idToPiece(m_processor, static_cast<int>(id), appendText, &out);
        return out;
    }
    std::int64_t tokenId(const std::string& token) const override {
        return m_library.pieceToId(m_processor, token.data(), token.size());
    }
    const std::vector<std::string>& loadNotices() const override { return m_notices; }

private:
    /// A template special: its piece, an empty span at `at` (the start or the end of the text).
    Token special(std::int64_t id, std::int64_t at) const {
        Token t;
        t.id = id;
        t.text = tokenString(id);
        t.byteBegin = t.byteEnd = at;
        return t;
    }

    const SentencePieceLibrary& m_library;
    void* m_processor;
    std::int64_t m_pieces;
    std::int64_t m_bosId, m_eosId;
    std::vector<std::string> m_notices;
};

}  // namespace

Result<std::shared_ptr<const ModelTokenizer>> loadSentencePieceTokenizer(const std::string& path, std::int64_t bosId,
                                                                         std::int64_t eosId) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return makeError(ErrorCode::NotFound, path + ": no such file");
    auto library = sentencePieceLibrary();
    if (!library) return library.error();
    std::string error;
    void* processor = library.value()->load(path.c_str(), appendText, &error);
    if (!processor) return makeError(ErrorCode::InvalidInput, path + ": not a SentencePiece model (" + error + ")");
    auto tokenizer = std::make_shared<SentencePieceTokenizer>(*library.value(), processor, bosId, eosId);
    for (const auto& [name, id] : {std::pair<const char*, std::int64_t>{"bos_token_id", bosId}, {"eos_token_id", eosId}})
        if (id >= tokenizer->vocabSize())
            return makeError(ErrorCode::InvalidInput, path + ": " + name + " " + std::to_string(id) + " is outside its " +
                                                          std::to_string(tokenizer->vocabSize()) + " pieces");
    return std::shared_ptr<const ModelTokenizer>(std::move(tokenizer));
}

}  // namespace attnscope::engine
