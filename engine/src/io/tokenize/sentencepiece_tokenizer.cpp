#include "io/tokenize/sentencepiece_tokenizer.h"

#include "io/tokenize/sanitized_text.h"
#include "io/tokenize/sentencepiece_process.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unordered_map>

namespace attnscope::engine {
namespace {

std::string unhex(const std::string& hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

/// The text in a private temporary file for the helper to read; removed with the object.
class TextFile {
public:
    explicit TextFile(const std::string& text) {
        std::string pattern = (std::filesystem::temp_directory_path() / "attnscope-spm-XXXXXX").string();
        const int fd = ::mkstemp(pattern.data());
        if (fd < 0) return;
        m_path = pattern;
        std::size_t written = 0;
        while (written < text.size()) {
            const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
            if (n <= 0) break;
            written += static_cast<std::size_t>(n);
        }
        ::close(fd);
        m_ok = written == text.size();
    }
    ~TextFile() {
        if (!m_path.empty()) std::remove(m_path.c_str());
    }
    TextFile(const TextFile&) = delete;
    TextFile& operator=(const TextFile&) = delete;
    bool ok() const { return m_ok; }
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    bool m_ok = false;
};

class SentencePieceTokenizer final : public ModelTokenizer {
public:
    SentencePieceTokenizer(std::string model, std::vector<std::string> pieces, std::vector<bool> control, std::int64_t bosId,
                           std::int64_t eosId)
        : m_model(std::move(model)), m_pieces(std::move(pieces)), m_control(std::move(control)), m_bosId(bosId), m_eosId(eosId) {
        for (std::size_t id = 0; id < m_pieces.size(); ++id) m_ids.emplace(m_pieces[id], static_cast<std::int64_t>(id));
    }

    ModelTokenizerKind kind() const override { return ModelTokenizerKind::SentencePiece; }
    std::int64_t vocabSize() const override { return static_cast<std::int64_t>(m_pieces.size()); }

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
        const TextFile file(sanitized.text());
        if (!file.ok()) return makeError(ErrorCode::Io, "SentencePiece: the text could not be handed to the tokenizer (temporary file)");
        auto printed = runSentencePieceHelper({"encode", m_model, file.path()});
        if (!printed) return printed.error();
        std::istringstream lines(printed.value());
        std::int64_t id = 0, begin = 0, end = 0;
        while (lines >> id >> begin >> end) {
            if (id < 0 || id >= vocabSize()) return makeError(ErrorCode::Internal, "SentencePiece: piece id " + std::to_string(id) + " out of range");
            Token t;
            t.id = id;
            t.text = m_pieces[static_cast<std::size_t>(id)];
            t.byteBegin = sanitized.inputBegin(begin);
            t.byteEnd = end > begin ? sanitized.inputEnd(end) : t.byteBegin;
            out.tokens.push_back(std::move(t));
            out.special.push_back(false);
        }
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

    // As SentencePiece decodes: pieces joined, byte pieces <0xNN> as their byte, ▁ as a space, the
    // leading space of the first word dropped; control pieces (<s>, </s>, <pad>) left out.
    std::string decode(const std::vector<std::int64_t>& ids) const override {
        std::string out;
        for (const std::int64_t id : ids) {
            if (id < 0 || id >= vocabSize() || m_control[static_cast<std::size_t>(id)]) continue;
            const std::string& piece = m_pieces[static_cast<std::size_t>(id)];
            if (piece.size() == 6 && piece.rfind("<0x", 0) == 0 && piece.back() == '>') {
                out += static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16));
                continue;
            }
            for (std::size_t i = 0; i < piece.size();) {
                if (piece.compare(i, 3, "\u2581") == 0) {
                    out += ' ';
                    i += 3;
                } else {
                    out += piece[i++];
                }
            }
        }
        if (!out.empty() && out.front() == ' ') out.erase(0, 1);
        return out;
    }
    std::string tokenString(std::int64_t id) const override {
        return id >= 0 && id < vocabSize() ? m_pieces[static_cast<std::size_t>(id)] : std::string();
    }
    std::int64_t tokenId(const std::string& token) const override {
        const auto it = m_ids.find(token);
        return it == m_ids.end() ? -1 : it->second;
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

    std::string m_model;
    std::vector<std::string> m_pieces;
    std::vector<bool> m_control;
    std::unordered_map<std::string, std::int64_t> m_ids;
    std::int64_t m_bosId, m_eosId;
    std::vector<std::string> m_notices;
};

}  // namespace

Result<std::shared_ptr<const ModelTokenizer>> loadSentencePieceTokenizer(const std::string& path, std::int64_t bosId,
                                                                         std::int64_t eosId) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return makeError(ErrorCode::NotFound, path + ": no such file");
    auto printed = runSentencePieceHelper({"pieces", path});
    if (!printed) {
        if (printed.error().code != ErrorCode::InvalidInput) return printed.error();
        return makeError(ErrorCode::InvalidInput, path + ": not a SentencePiece model (" + printed.error().message + ")");
    }
    std::vector<std::string> pieces;
    std::vector<bool> control;
    std::istringstream lines(printed.value());
    for (std::string line; std::getline(lines, line);) {
        const auto tab = line.find('\t');
        if (tab == std::string::npos) return makeError(ErrorCode::Internal, path + ": the tokenizer's piece list is malformed");
        control.push_back(line.compare(0, tab, "1") == 0);
        pieces.push_back(unhex(line.substr(tab + 1)));
    }
    for (const auto& [name, id] : {std::pair<const char*, std::int64_t>{"bos_token_id", bosId}, {"eos_token_id", eosId}})
        if (id >= static_cast<std::int64_t>(pieces.size()))
            return makeError(ErrorCode::InvalidInput, path + ": " + name + " " + std::to_string(id) + " is outside its " +
                                                          std::to_string(pieces.size()) + " pieces");
    return std::shared_ptr<const ModelTokenizer>(
        std::make_shared<SentencePieceTokenizer>(path, std::move(pieces), std::move(control), bosId, eosId));
}

}  // namespace attnscope::engine
