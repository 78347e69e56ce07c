#pragma once
// The pattern variants' kernel: exact softmax attention over a BlockPattern (pattern/
// block_pattern.h), computed group by group on each block of rows' allowed keys only.

#include "attention/pattern/block_pattern.h"
#include "attention/variants/variant.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

struct PatternKernelInput {
    const BlockPattern* pattern = nullptr;
    /// [m] 1 = padded key (weight exactly 0); empty = none.
    std::vector<std::uint8_t> keyPadding;
    /// [n] 1 = padded query (row zeroed, row_status 2); empty = none.
    std::vector<std::uint8_t> queryPadding;
    std::string slot;  ///< buffer-pool slot prefix (the variant id)
};

/// q: [heads, n, d]; k, v: [heads, m, d] (m = pattern->m). Fills
/// result.output, result.stats "row_max" and "row_sum" (F32 [heads, n]: every weight is
/// exp(s/sqrt(d) − row_max) / row_sum; −inf and 0 for empty and padded rows),
/// rowStatus, emptyRowCount and the counters' flops and entries.
void runPatternKernel(const Qkv& qkv, const PatternKernelInput& input, RunContext& ctx, AttentionResult& result);

}  // namespace attnscope::engine
