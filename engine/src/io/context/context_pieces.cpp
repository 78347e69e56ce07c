#include "io/context/context_pieces.h"

#include <algorithm>

namespace attnscope::engine::context {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool isContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0u) == 0x80u; }

/// Cuts [begin, end) of one line into pieces of at most maxBytes.
void cutLine(const std::string& corpus, std::int64_t begin, std::int64_t end, std::int64_t maxBytes,
             std::vector<CorpusPiece>& out) {
    while (begin < end) {
        while (begin < end && isSpace(corpus[static_cast<std::size_t>(begin)])) ++begin;
        if (begin == end) return;
        std::int64_t stop = end;
        if (end - begin > maxBytes) {
            stop = begin + maxBytes;
            std::int64_t space = stop;
            while (space > begin && !isSpace(corpus[static_cast<std::size_t>(space)])) --space;
            if (space > begin) {
                stop = space;
            } else {
                while (stop > begin + 1 && isContinuationByte(corpus[static_cast<std::size_t>(stop)])) --stop;
            }
        }
        std::int64_t last = stop;
        while (last > begin && isSpace(corpus[static_cast<std::size_t>(last - 1)])) --last;
        if (last > begin) out.push_back({begin, last});
        begin = stop;
    }
}

}  // namespace

std::vector<CorpusPiece> corpusPieces(const std::string& corpus, std::int64_t maxBytes) {
    maxBytes = std::max<std::int64_t>(maxBytes, 8);
    std::vector<CorpusPiece> pieces;
    const auto size = static_cast<std::int64_t>(corpus.size());
    std::int64_t lineBegin = 0;
    while (lineBegin < size) {
        const auto newline = corpus.find('\n', static_cast<std::size_t>(lineBegin));
        const std::int64_t lineEnd = newline == std::string::npos ? size : static_cast<std::int64_t>(newline);
        cutLine(corpus, lineBegin, lineEnd, maxBytes, pieces);
        lineBegin = lineEnd + 1;
    }
    return pieces;
}

std::int64_t pieceBytesFor(std::int64_t maxTokens) {
    constexpr std::int64_t kLongest = 256;
    if (maxTokens <= 0) return kLongest;
    return std::clamp<std::int64_t>(maxTokens - 4, 8, kLongest);
}

}  // namespace attnscope::engine::context
