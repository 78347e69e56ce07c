// The fixed factorisation of the Sparse Transformer (Child et al. 2019, §4; VARIANTS.md §3):
// A1 = the query's own block of l, A2 = the c "summary" cells of every block (by default the last
// c; per head at an offset of its own).

#include "attention/variants/sparse_fixed/sparse_fixed_pattern.h"

#include "base/api/engine_error.h"
#include "base/api/param_access.h"

#include <algorithm>
#include <map>
#include <string>

namespace attnscope::engine {
namespace {

// Every summary cell of the head gathered once, in order (gatheredKeys), so that the rows of one
// block attend one run of them (the earlier blocks' cells; non-causal also the later ones) and
// their own block (masked to j <= i when causal). A causal row's keys are then one interval,
// [0, earlier cells + i - b0 + 1), which the kernel computes without a masked half.
DensePlan headPlan(std::int64_t n, std::int64_t l, std::int64_t c, std::int64_t o, bool causal) {
    DensePlan plan;
    std::vector<std::int64_t> before;  // gathered cells of the blocks before block b
    for (std::int64_t s0 = 0; s0 < n; s0 += l) {
        before.push_back(static_cast<std::int64_t>(plan.gatheredKeys.size()));
        for (std::int64_t j = s0 + o; j < std::min(n, s0 + o + c); ++j) plan.gatheredKeys.push_back(static_cast<std::int32_t>(j));
    }
    const auto total = static_cast<std::int64_t>(plan.gatheredKeys.size());
    for (std::int64_t b0 = 0, bi = 0; b0 < n; b0 += l, ++bi) {
        const std::int64_t bEnd = std::min(n, b0 + l);
        const std::int64_t own0 = before[static_cast<std::size_t>(bi)];
        const std::int64_t own1 =
            bi + 1 < static_cast<std::int64_t>(before.size()) ? before[static_cast<std::size_t>(bi + 1)] : total;
        for (std::int64_t i0 = b0; i0 < bEnd; i0 += kPatternRowsPerGroup) {
            const std::int64_t i1 = std::min(bEnd, i0 + kPatternRowsPerGroup);
            plan.beginGroup(i0, 1, i1 - i0);
            if (own0 > 0) plan.addGatheredSegment(0, own0, false, PatternReason::Summary);
            plan.addSegment(b0, 1, (causal ? i1 : bEnd) - b0, /*masked=*/causal, PatternReason::Local);
            if (!causal && total > own1) plan.addGatheredSegment(own1, total - own1, false, PatternReason::Summary);
        }
    }
    plan.range = [](std::int64_t i, std::int64_t, const DenseSegment& seg, std::int64_t& lo, std::int64_t& hi) {
        lo = 0;
        hi = i - seg.keyStart + 1;  // causal: keys b0..i of the own block
    };
    return plan;
}

}  // namespace

BlockPattern sparseFixedPattern(const ParamValues& params, std::int64_t heads, std::int64_t n) {
    const std::int64_t l = paramInt(params, "block"), c = paramInt(params, "summary");
    const bool causal = paramBool(params, "causal");
    if (l > n)
        throw EngineError(ErrorCode::InvalidArgument, "sparse_fixed: parameter 'block' must be in [1, n] = [1, " +
                                                          std::to_string(n) + "], got " + std::to_string(l));
    if (c > l)
        throw EngineError(ErrorCode::InvalidArgument, "sparse_fixed: parameter 'summary' must be in [1, block] = [1, " +
                                                          std::to_string(l) + "], got " + std::to_string(c));
    std::vector<std::int64_t> offsets = paramIntList(params, "summary_offsets");
    if (offsets.size() > 1 && static_cast<std::int64_t>(offsets.size()) != heads)
        throw EngineError(ErrorCode::InvalidArgument, "sparse_fixed: parameter 'summary_offsets' needs no value, 1 value "
                                                      "or one per head (" + std::to_string(heads) + "), got " +
                                                          std::to_string(offsets.size()));
    if (offsets.empty()) offsets.push_back(l - c);
    for (std::int64_t o : offsets)
        if (o < 0 || o > l - c)
            throw EngineError(ErrorCode::InvalidArgument, "sparse_fixed: parameter 'summary_offsets' must be in [0, block - "
                                                          "summary] = [0, " + std::to_string(l - c) + "], got " +
                                                              std::to_string(o));
    BlockPattern pattern;
    pattern.n = pattern.m = n;
    std::map<std::int64_t, std::shared_ptr<const DensePlan>> byOffset;  // heads of equal offset share one
    for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t o = offsets.size() == 1 ? offsets[0] : offsets[static_cast<std::size_t>(h)];
        auto& plan = byOffset[o];
        if (!plan) plan = std::make_shared<const DensePlan>(headPlan(n, l, c, o, causal));
        pattern.heads.push_back(plan);
    }
    return pattern;
}

}  // namespace attnscope::engine
