#pragma once
// How a corpus is cut for the model: one piece per line, a long line cut at spaces, so that no
// piece has more bytes than the model has positions (every tokenizer the engine reads makes at
// most one token per byte) and none is truncated.

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine::context {

struct CorpusPiece {
    std::int64_t begin = 0, end = 0;  ///< bytes [begin, end) of the corpus
};

/// The pieces of `corpus`, none longer than `maxBytes` (at least 8): blank lines are skipped, a
/// line longer than that is cut after its last space that fits (mid-word, at a character boundary,
/// when a word alone is longer), and spaces at a piece's ends are left out.
std::vector<CorpusPiece> corpusPieces(const std::string& corpus, std::int64_t maxBytes);

/// The bytes a piece may have for a model with `maxTokens` positions (0: unknown): room for the
/// special tokens, and at most 256 so each pass's attention stays small.
std::int64_t pieceBytesFor(std::int64_t maxTokens);

}  // namespace attnscope::engine::context
