#include <attnscope/tokenize.h>

#include "io/tokenize/utf8.h"
#include "io/tokenize/word_splitter.h"

#include <cstdio>
#include <new>
#include <utility>

namespace attnscope::engine {

namespace {

/// Larger texts would need gigabytes of Token objects (~56 bytes each) and are far beyond what
/// any attention view can show.
constexpr std::size_t kMaxTextBytes = std::size_t{256} << 20;
/// Progress granularity: small enough to cancel within a millisecond, large enough that the
/// callback costs nothing next to tokenizing.
constexpr std::size_t kProgressChunkBytes = std::size_t{64} << 10;
constexpr const char* kStage = "tokenize";

Error invalidUtf8Error(const std::string& text, std::size_t offset) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[offset]));
    return makeError(ErrorCode::InvalidInput, "invalid UTF-8 at byte offset " +
                                                  std::to_string(offset) + " (" + byte + ")");
}

Error cancelledError(std::size_t done, std::size_t total) {
    return makeError(ErrorCode::Cancelled, "tokenizing cancelled at byte " +
                                               std::to_string(done) + " of " +
                                               std::to_string(total));
}

bool isKnownKind(TokenizerKind kind) {
    return kind == TokenizerKind::Bytes || kind == TokenizerKind::Chars ||
           kind == TokenizerKind::Words;
}

Result<TokenizedInput> tokenizeChecked(const InputSpec& input, const ProgressFn& progress) {
    const std::string& text = input.text;
    const auto* data = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t size = text.size();
    const auto total = static_cast<std::int64_t>(size);

    TokenizedInput result;
    result.text = text;
    result.kind = input.tokenizer;
    WordSplitter words(text, result.tokens);

    // One pass validates and tokenizes, so cancellation also covers validating a huge text.
    std::size_t nextReport = kProgressChunkBytes;
    std::size_t pos = 0;
    while (pos < size) {
        if (pos >= nextReport) {
            if (progress && !progress(Progress{kStage, static_cast<std::int64_t>(pos), total}))
                return cancelledError(pos, size);
            nextReport = (pos / kProgressChunkBytes + 1) * kProgressChunkBytes;
        }
        const Utf8Step step = decodeUtf8(data, size, pos);
        if (step.length == 0) return invalidUtf8Error(text, pos);
        const auto begin = static_cast<std::int64_t>(pos);
        const auto end = begin + step.length;

        switch (input.tokenizer) {
        case TokenizerKind::Bytes:
            for (std::int64_t b = begin; b < end; ++b) {
                const auto byte = static_cast<std::size_t>(b);
                result.tokens.push_back(Token{text.substr(byte, 1), b, b + 1, data[byte]});
            }
            break;
        case TokenizerKind::Chars:
            result.tokens.push_back(
                Token{text.substr(pos, static_cast<std::size_t>(step.length)), begin, end,
                      static_cast<std::int64_t>(step.codePoint)});
            break;
        case TokenizerKind::Words: words.feed(step.codePoint, begin, end); break;
        case TokenizerKind::Model:
        case TokenizerKind::Pixels:
        case TokenizerKind::Patches: break;  // refused by isKnownKind before the loop
        }
        pos += static_cast<std::size_t>(step.length);
    }
    if (input.tokenizer == TokenizerKind::Words) words.finish();

    if (progress && !progress(Progress{kStage, total, total})) return cancelledError(size, size);
    return result;
}

}  // namespace

Result<TokenizedInput> tokenize(const InputSpec& input, const ProgressFn& progress) {
    if (input.text.size() > kMaxTextBytes) {
        return makeError(ErrorCode::InvalidArgument,
                         "text is " + std::to_string(input.text.size()) +
                             " bytes; the tokenizer accepts at most " +
                             std::to_string(kMaxTextBytes) + " bytes (256 MiB)");
    }
    if (!isKnownKind(input.tokenizer)) {
        return makeError(ErrorCode::InvalidArgument,
                         "unknown tokenizer kind " +
                             std::to_string(static_cast<int>(input.tokenizer)));
    }
    // NOTE: the bytes tokenizer needs ~56 bytes of Token per input byte; a large text can run out
    // of memory before the size limit is reached, and this API must not throw.
    try {
        return tokenizeChecked(input, progress);
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfBudget,
                         "out of memory while tokenizing " + std::to_string(input.text.size()) +
                             " bytes with the '" + tokenizerName(input.tokenizer) +
                             "' tokenizer");
    }
}

Result<TokenizerKind> parseTokenizerKind(const std::string& name) {
    for (const TokenizerKind kind :
         {TokenizerKind::Bytes, TokenizerKind::Chars, TokenizerKind::Words}) {
        if (name == tokenizerName(kind)) return kind;
    }
    return makeError(ErrorCode::InvalidArgument,
                     "unknown tokenizer '" + name + "' (allowed: bytes, chars, words)");
}

const char* tokenizerName(TokenizerKind kind) {
    switch (kind) {
    case TokenizerKind::Bytes: return "bytes";
    case TokenizerKind::Chars: return "chars";
    case TokenizerKind::Words: return "words";
    case TokenizerKind::Model: return "model";
    case TokenizerKind::Pixels: return "pixels";
    case TokenizerKind::Patches: return "patches";
    }
    return "?";
}

}  // namespace attnscope::engine
