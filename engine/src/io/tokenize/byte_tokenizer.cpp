#include "io/tokenize/byte_tokenizer.h"

#include <cstdio>

namespace attnscope::engine {
namespace {

class ByteTokenizer final : public ModelTokenizer {
public:
    ModelTokenizerKind kind() const override { return ModelTokenizerKind::Bytes; }
    std::int64_t vocabSize() const override { return 256; }

    Result<EncodedText> encode(const std::string& text, bool, const ProgressFn& progress) const override {
        if (text.size() > kMaxModelTokenizerTextBytes)
            return makeError(ErrorCode::InvalidArgument, "the text has " + std::to_string(text.size()) +
                                                             " bytes; the tokenizer takes at most " +
                                                             std::to_string(kMaxModelTokenizerTextBytes));
        EncodedText out;
        out.tokens.reserve(text.size());
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (progress && i % 65536 == 0 && i > 0 && !progress(Progress{"tokenize", static_cast<std::int64_t>(i),
                                                                          static_cast<std::int64_t>(text.size())}))
                return makeError(ErrorCode::Cancelled, "cancelled");
            Token t;
            t.id = static_cast<unsigned char>(text[i]);
            t.text = text.substr(i, 1);
            t.byteBegin = static_cast<std::int64_t>(i);
            t.byteEnd = static_cast<std::int64_t>(i + 1);
            out.tokens.push_back(std::move(t));
        }
        out.typeIds.assign(out.tokens.size(), 0);
        out.special.assign(out.tokens.size(), false);
        return out;
    }

    std::string decode(const std::vector<std::int64_t>& ids) const override {
        std::string out;
        for (std::int64_t id : ids)
            if (id >= 0 && id < 256) out += static_cast<char>(id);
        return out;
    }
    std::string tokenString(std::int64_t id) const override {
        return id >= 0 && id < 256 ? std::string(1, static_cast<char>(id)) : std::string();
    }
    std::int64_t tokenId(const std::string& token) const override {
        return token.size() == 1 ? static_cast<unsigned char>(token[0]) : -1;
    }
    const std::vector<std::string>& loadNotices() const override { return m_notices; }

private:
    std::vector<std::string> m_notices;
};

}  // namespace

std::shared_ptr<const ModelTokenizer> makeByteTokenizer() { return std::make_shared<ByteTokenizer>(); }

}  // namespace attnscope::engine
