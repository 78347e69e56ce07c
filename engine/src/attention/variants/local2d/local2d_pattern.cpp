// The k × k neighbourhood of Image Transformer-style local 2-D attention (Parmar et al. 2018;
// xformers' local_2d_pattern with the Chebyshev distance, VARIANTS.md §15) as groups of one
// grid row's cells against the 2h + 1 rows around it, each a run of consecutive keys masked to
// the query's columns c − h … c + h.

#include "attention/variants/local2d/local2d_pattern.h"

#include "base/api/engine_error.h"
#include "base/api/param_access.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnscope::engine {
namespace {

// Query cells per group: a row is cut into blocks of this many columns (each against its own
// columns ± h), so that long rows do not read whole rows of keys per query.
constexpr std::int64_t kColumnsPerGroup = 64;

struct Grid {
    std::int64_t prefix = 0, width = 1, cells = 0, half = 0;
    bool causal = false;
    std::int64_t rows() const { return (cells + width - 1) / width; }
    std::int64_t rowLength(std::int64_t r) const { return std::min(width, cells - r * width); }
};

void addPrefixRows(DensePlan& plan, const Grid& g, std::int64_t n) {
    if (g.prefix == 0) return;
    plan.beginGroup(0, 1, g.prefix);
    plan.addSegment(0, 1, n, /*masked=*/g.causal, PatternReason::Global);
}

void addCellRows(DensePlan& plan, const Grid& g) {
    for (std::int64_t r = 0; r < g.rows(); ++r)
        for (std::int64_t c0 = 0; c0 < g.rowLength(r); c0 += kColumnsPerGroup) {
            const std::int64_t c1 = std::min(g.rowLength(r), c0 + kColumnsPerGroup);
            plan.beginGroup(g.prefix + r * g.width + c0, 1, c1 - c0);
            if (g.prefix > 0) plan.addSegment(0, 1, g.prefix, /*masked=*/false, PatternReason::Global);
            const std::int64_t lastRow = g.causal ? r : std::min(g.rows() - 1, r + g.half);
            for (std::int64_t rr = std::max<std::int64_t>(0, r - g.half); rr <= lastRow; ++rr) {
                const std::int64_t k0 = std::max<std::int64_t>(0, c0 - g.half);
                const std::int64_t k1 = std::min(g.rowLength(rr), c1 + g.half);
                if (k1 > k0) plan.addSegment(g.prefix + rr * g.width + k0, 1, k1 - k0, /*masked=*/true, PatternReason::Local);
            }
        }
}

}  // namespace

BlockPattern local2dPattern(const ParamValues& params, std::int64_t heads, std::int64_t n) {
    Grid g;
    const std::int64_t window = paramInt(params, "window");
    if (window % 2 == 0)
        throw EngineError(ErrorCode::InvalidArgument,
                          "local2d: parameter 'window' must be odd (a k × k neighbourhood centred on the query), got " +
                              std::to_string(window));
    g.half = (window - 1) / 2;
    g.width = paramInt(params, "width");
    g.prefix = paramInt(params, "prefix");
    g.causal = paramBool(params, "causal");
    if (g.prefix >= n)
        throw EngineError(ErrorCode::InvalidArgument, "local2d: parameter 'prefix' must be below n = " + std::to_string(n) + ", got " +
                                                          std::to_string(g.prefix));
    g.cells = n - g.prefix;
    // 0 (not an image): the tokens laid out as a square, ⌈√cells⌉ a row
    if (g.width == 0) g.width = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(g.cells))));
    DensePlan plan;
    addPrefixRows(plan, g, n);
    addCellRows(plan, g);
    const std::int64_t prefix = g.prefix, width = g.width, half = g.half;
    const bool causal = g.causal;
    plan.range = [prefix, width, half, causal](std::int64_t i, std::int64_t, const DenseSegment& seg, std::int64_t& lo,
                                               std::int64_t& hi) {
        if (seg.reason == PatternReason::Global) {  // a prefix row, causal: keys 0 … i
            lo = 0;
            hi = i + 1;
            return;
        }
        const std::int64_t c = (i - prefix) % width, first = (seg.keyStart - prefix) % width;
        lo = c - half - first;
        hi = c + half + 1 - first;
        if (causal && (seg.keyStart - prefix) / width == (i - prefix) / width) hi = c + 1 - first;  // own row: up to the query
    };
    BlockPattern pattern;
    pattern.n = pattern.m = n;
    pattern.heads.assign(static_cast<std::size_t>(heads), std::make_shared<const DensePlan>(std::move(plan)));
    return pattern;
}

}  // namespace attnscope::engine
