// Longformer's pattern (Beltagy et al. 2020; VARIANTS.md §4): a sliding window of w keys per side
// (dilated by d: keys i + t·d, t in [-w, w], t <= 0 when causal) plus symmetric global tokens,
// which attend every key and which every query attends once.

#include "attention/variants/longformer/longformer_pattern.h"

#include "base/api/engine_error.h"
#include "base/api/param_access.h"

#include <algorithm>
#include <map>
#include <string>

namespace attnscope::engine {
namespace {

struct LongformerSpec {
    std::int64_t window = 0;
    bool causal = false;
    std::vector<std::int64_t> dilation;  ///< [1] or [heads]
    std::vector<std::int64_t> globals;   ///< sorted, distinct
};

LongformerSpec checkedSpec(const ParamValues& params, std::int64_t heads, std::int64_t n) {
    LongformerSpec s;
    s.window = paramInt(params, "window");
    s.causal = paramBool(params, "causal");
    if (s.window >= n)
        throw EngineError(ErrorCode::InvalidArgument, "longformer: parameter 'window' (keys per side) must be in [0, n-1] = [0, " +
                                                          std::to_string(n - 1) + "], got " + std::to_string(s.window));
    s.dilation = paramIntList(params, "dilation");
    if (s.dilation.size() != 1 && static_cast<std::int64_t>(s.dilation.size()) != heads)
        throw EngineError(ErrorCode::InvalidArgument, "longformer: parameter 'dilation' needs 1 value or one per head (" +
                                                          std::to_string(heads) + "), got " +
                                                          std::to_string(s.dilation.size()));
    if (s.dilation.empty()) s.dilation.push_back(1);
    s.globals = paramIntList(params, "global");
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
    for (std::int64_t g : s.globals) {
        if (g < 0 || g >= n)
            throw EngineError(ErrorCode::InvalidArgument, "longformer: parameter 'global': index " + std::to_string(g) +
                                                              " is out of range [0, " + std::to_string(n - 1) + "]");
        if (seen[static_cast<std::size_t>(g)])
            throw EngineError(ErrorCode::InvalidArgument,
                              "longformer: parameter 'global': index " + std::to_string(g) + " is listed twice");
        seen[static_cast<std::size_t>(g)] = 1;
    }
    std::sort(s.globals.begin(), s.globals.end());
    return s;
}

// Rows of one residue mod d share a window of keys of that residue: a group of rows r + u·d,
// u in [u0, u1), against keys r + s·d, s in [u0 - w, u1 + w) (causal: to u1), masked per row to
// |u - s| <= w (s <= u when causal).
DensePlan windowOnly(const LongformerSpec& s, std::int64_t n, std::int64_t dh) {
    DensePlan plan;
    const std::int64_t w = s.window;
    const bool causal = s.causal;
    const PatternReason reason = dh == 1 ? PatternReason::Local : PatternReason::Dilated;
    for (std::int64_t r = 0; r < std::min(dh, n); ++r) {
        const std::int64_t rows = (n - r + dh - 1) / dh;
        for (std::int64_t u0 = 0; u0 < rows; u0 += kPatternRowsPerGroup) {
            const std::int64_t u1 = std::min(rows, u0 + kPatternRowsPerGroup);
            const std::int64_t s0 = std::max<std::int64_t>(0, u0 - w), s1 = std::min(rows, causal ? u1 : u1 + w);
            plan.beginGroup(r + u0 * dh, dh, u1 - u0);
            plan.addSegment(r + s0 * dh, dh, s1 - s0, /*masked=*/true, reason);
        }
    }
    plan.range = [w, causal, dh](std::int64_t i, std::int64_t, const DenseSegment& seg, std::int64_t& lo,
                                 std::int64_t& hi) {
        const std::int64_t u = (i - seg.keyStart) / dh;  // the query's index in the segment
        lo = u - w;
        hi = u + (causal ? 0 : w) + 1;
    };
    return plan;
}

// With global tokens: a run of global rows attends every key (j <= i when causal); the other
// rows, in runs of one residue between global rows, attend their window without the global keys
// and then every global key once (causal: those <= i), gathered.
DensePlan withGlobals(const LongformerSpec& s, std::int64_t n, std::int64_t dh) {
    DensePlan plan;
    const std::int64_t w = s.window;
    const bool causal = s.causal;
    const std::vector<std::int64_t>& globals = s.globals;
    const auto g = static_cast<std::int64_t>(globals.size());
    const PatternReason windowReason = dh == 1 ? PatternReason::Local : PatternReason::Dilated;
    plan.excluded.assign(static_cast<std::size_t>(n), 0);
    for (std::int64_t j : globals) plan.excluded[static_cast<std::size_t>(j)] = 1;
    plan.gatheredKeys.assign(globals.begin(), globals.end());
    const auto isGlobal = [&](std::int64_t i) { return plan.excluded[static_cast<std::size_t>(i)] != 0; };
    for (std::int64_t i0 = 0; i0 < n;) {  // runs of global rows
        if (!isGlobal(i0)) {
            ++i0;
            continue;
        }
        std::int64_t i1 = i0 + 1;
        while (i1 < n && i1 - i0 < kPatternRowsPerGroup && isGlobal(i1)) ++i1;
        plan.beginGroup(i0, 1, i1 - i0);
        plan.addSegment(0, 1, causal ? i1 : n, /*masked=*/causal, PatternReason::Global);
        i0 = i1;
    }
    for (std::int64_t r = 0; r < std::min(dh, n); ++r) {
        const std::int64_t rows = (n - r + dh - 1) / dh;
        for (std::int64_t u0 = 0; u0 < rows;) {
            if (isGlobal(r + u0 * dh)) {
                ++u0;
                continue;
            }
            std::int64_t u1 = u0 + 1;
            while (u1 < rows && u1 - u0 < kPatternRowsPerGroup && !isGlobal(r + u1 * dh)) ++u1;
            const std::int64_t s0 = std::max<std::int64_t>(0, u0 - w), s1 = std::min(rows, causal ? u1 : u1 + w);
            plan.beginGroup(r + u0 * dh, dh, u1 - u0);
            plan.addSegment(r + s0 * dh, dh, s1 - s0, /*masked=*/true, windowReason, /*skipExcluded=*/true);
            plan.addGatheredSegment(0, g, /*masked=*/causal, PatternReason::Global);
            u0 = u1;
        }
    }
    plan.range = [w, causal, dh, globals](std::int64_t i, std::int64_t, const DenseSegment& seg, std::int64_t& lo,
                                          std::int64_t& hi) {
        if (seg.gathered) {  // causal: the global keys <= i
            lo = 0;
            hi = std::upper_bound(globals.begin(), globals.end(), i) - globals.begin();
        } else if (seg.reason == PatternReason::Global) {  // a global row, causal: keys <= i
            lo = 0;
            hi = i + 1;
        } else {
            const std::int64_t u = (i - seg.keyStart) / dh;
            lo = u - w;
            hi = u + (causal ? 0 : w) + 1;
        }
    };
    return plan;
}

}  // namespace

BlockPattern longformerPattern(const ParamValues& params, std::int64_t heads, std::int64_t n) {
    const LongformerSpec spec = checkedSpec(params, heads, n);
    BlockPattern pattern;
    pattern.n = pattern.m = n;
    std::map<std::int64_t, std::shared_ptr<const DensePlan>> byDilation;  // heads of equal dilation share one
    for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t dh = spec.dilation.size() == 1 ? spec.dilation[0] : spec.dilation[static_cast<std::size_t>(h)];
        auto& plan = byDilation[dh];
        if (!plan)
            plan = std::make_shared<const DensePlan>(spec.globals.empty() ? windowOnly(spec, n, dh)
                                                                          : withGlobals(spec, n, dh));
        pattern.heads.push_back(plan);
    }
    return pattern;
}

}  // namespace attnscope::engine
