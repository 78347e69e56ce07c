// DensePlan::strided as explicit groups (attention/pattern/block_pattern.h): for kernels that cannot run the
// strided keys pass.

#include "attention/pattern/block_pattern.h"

#include <algorithm>

namespace attnscope::engine {

DensePlan expandStridedRule(const DensePlan& plan, std::int64_t n, std::int64_t m) {
    DensePlan out = plan;
    const auto s = plan.strided;
    out.strided = {};
    if (s.step <= 0) return out;
    out.singleCover = false;
    constexpr std::int64_t kRows = 96;
    // Row u of residue r (query r + u·step) attends the residue's keys s (key r + s·step) with
    // s <= u - gap, and with `above` also s >= u + gap.
    for (std::int64_t r = 0; r < std::min(s.step, n); ++r) {
        const std::int64_t rows = (n - r + s.step - 1) / s.step;
        const std::int64_t keys = r < m ? (m - r + s.step - 1) / s.step : 0;
        for (std::int64_t u0 = 0; u0 < rows; u0 += kRows) {
            const std::int64_t u1 = std::min(rows, u0 + kRows);
            const std::int64_t below = std::clamp<std::int64_t>(u1 - s.gap, 0, keys);  // s < below for the last row
            const std::int64_t above0 = std::min(keys, u0 + s.gap);
            if (below == 0 && (!s.above || above0 >= keys)) continue;
            out.beginGroup(r + u0 * s.step, s.step, u1 - u0);
            if (below > 0) out.addSegment(r, s.step, below, /*masked=*/true, PatternReason::Stride);
            if (s.above && above0 < keys)
                out.addSegment(r + above0 * s.step, s.step, keys - above0, /*masked=*/true, PatternReason::Stride);
        }
    }
    // The new segments are the ones of reason Stride with the rule's step (a plan with the rule has
    // no others); "below" starts at the residue's first key, "above" later.
    const auto original = plan.range;
    const std::int64_t step = s.step, gap = s.gap;
    out.range = [original, step, gap](std::int64_t i, std::int64_t segInGroup, const DenseSegment& seg, std::int64_t& lo,
                                      std::int64_t& hi) {
        if (seg.reason != PatternReason::Stride || seg.keyStep != step || !original) {
            if (original) original(i, segInGroup, seg, lo, hi);
            return;
        }
        const std::int64_t u = i / step;                      // the query's index in its residue
        const std::int64_t first = seg.keyStart / step;       // the segment's first key index s
        if (first == 0 && segInGroup == 0) {                  // below: s <= u - gap
            lo = 0;
            hi = u - gap + 1;
        } else {                                              // above: s >= u + gap
            lo = u + gap - first;
            hi = seg.keyCount;
        }
    };
    return out;
}

}  // namespace attnscope::engine
