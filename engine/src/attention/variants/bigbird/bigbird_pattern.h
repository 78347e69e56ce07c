#pragma once
// BigBird's block pattern and block geometry, defined once: its run, its weights, its element graph and its listing derive from them.
// Checks what the schema cannot and throws EngineError(InvalidArgument) naming the parameter and
// the rule (VARIANTS.md gives the rules).

#include "attention/pattern/block_pattern.h"

#include <attnscope/tensor.h>
#include <attnscope/variant_info.h>

#include <cstdint>

namespace attnscope::engine {

/// n: the (padded) length the blocks tile; randAttn: I64 [heads, ITC nb - 2 | ETC nb, random].
BlockPattern bigbirdPattern(const ParamValues& params, std::int64_t heads, std::int64_t n, const PlainTensor& randAttn);
/// BigBird's block geometry for n tokens: checks divisibility and the number of blocks.
struct BigBirdBlocks {
    std::int64_t block = 0, random = 0, globalTokens = 0, blocks = 0;  ///< b, r, g (ETC), nb
    bool etc = false;
    /// Rows of rand_attn: query blocks 1..nb-2 (ITC) or every block (ETC).
    std::int64_t randomRows() const { return etc ? blocks : blocks - 2; }
};
/// Throws EngineError(InvalidArgument) when n (ETC: n - extra_global) is not a multiple of the
/// block (the message offers pad=true) or there are too few blocks for `random`.
BigBirdBlocks bigbirdBlocks(const ParamValues& params, std::int64_t n);
/// The length BigBird's pad=true pads n to (n itself when it needs no padding).
std::int64_t bigbirdPaddedLength(const ParamValues& params, std::int64_t n);


}  // namespace attnscope::engine
