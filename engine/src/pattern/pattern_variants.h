#pragma once
// The patterns of the pattern variants, each defined once here (VARIANTS.md gives the rules):
// from the resolved parameters (and BigBird's drawn blocks) to a BlockPattern. The variants'
// runs hand it to the kernel; their weights (and result files read back) derive rows from it.
// Each builder checks what the schema cannot (a window below n, one dilation per head, ...) and
// throws EngineError(InvalidArgument) naming the parameter and the rule.

#include "pattern/block_pattern.h"

#include <attnscope/tensor.h>
#include <attnscope/variant_info.h>

#include <cstdint>

namespace attnscope::engine {

/// Query rows per group of the band-like patterns (the kernel computes 3-6 rows at a time over
/// the rows' own keys, so this sets the setup cost per group, not the waste).
constexpr std::int64_t kPatternRowsPerGroup = 64;

BlockPattern longformerPattern(const ParamValues& params, std::int64_t heads, std::int64_t n);
BlockPattern sparseStridedPattern(const ParamValues& params, std::int64_t heads, std::int64_t n);
BlockPattern sparseFixedPattern(const ParamValues& params, std::int64_t heads, std::int64_t n);
/// n: the (padded) length the blocks tile; randAttn: I64 [heads, ITC nb - 2 | ETC nb, random].
BlockPattern bigbirdPattern(const ParamValues& params, std::int64_t heads, std::int64_t n, const PlainTensor& randAttn);
/// Keys 0..n-1 and the relay key n (the mean of the keys).
BlockPattern starPattern(const ParamValues& params, std::int64_t heads, std::int64_t n);

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

/// Rewrites a pattern's strided rule (DensePlan::strided) as explicit groups of rows of one
/// residue against that residue's keys, for kernels that cannot run the strided keys pass (key
/// padding). Same entries, same reasons.
DensePlan expandStridedRule(const DensePlan& plan, std::int64_t n, std::int64_t m);

}  // namespace attnscope::engine
