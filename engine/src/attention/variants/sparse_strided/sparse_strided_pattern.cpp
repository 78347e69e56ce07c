// The strided factorisation of the Sparse Transformer (Child et al. 2019, §4; VARIANTS.md §3): a
// local band A1 and a strided set A2 = {j : (i - j) mod l = 0}, as their union on every head or
// interleaved over heads (even heads local, odd heads strided).

#include "attention/variants/sparse_strided/sparse_strided_pattern.h"

#include "base/api/engine_error.h"
#include "base/api/param_access.h"

#include <algorithm>
#include <string>

namespace attnscope::engine {
namespace {

// Rows per group: consecutive (the band) and of one residue mod l (strided-only heads). Fewer,
// larger groups cost less to set up; beyond 96 rows nothing more was gained.
constexpr std::int64_t kStridedRows = 96;
constexpr std::int64_t kBandRows = 96;

struct StridedSpec {
    std::int64_t stride = 1, band = 0;  ///< l, and the band's keys on each side of the query
    bool causal = true;
};

// The band: blocks of consecutive rows against keys [i0 - band, i1) (non-causal: to i1 + band),
// masked to [i - band, i] (to i + band).
void addBand(DensePlan& plan, const StridedSpec& s, std::int64_t n) {
    for (std::int64_t i0 = 0; i0 < n; i0 += kBandRows) {
        const std::int64_t i1 = std::min(n, i0 + kBandRows), k0 = std::max<std::int64_t>(0, i0 - s.band);
        const std::int64_t k1 = s.causal ? i1 : std::min(n, i1 + s.band);
        plan.beginGroup(i0, 1, i1 - i0);
        plan.addSegment(k0, 1, k1 - k0, /*masked=*/true, PatternReason::Local);
    }
}

// A strided-only head: rows of one residue r mod l against keys r, r + l, ... (causal: masked to
// the keys <= i).
void addResidues(DensePlan& plan, const StridedSpec& s, std::int64_t n) {
    const std::int64_t l = s.stride;
    for (std::int64_t r = 0; r < std::min(l, n); ++r) {
        const std::int64_t rows = (n - r + l - 1) / l;  // = the residue's keys (m = n)
        for (std::int64_t u0 = 0; u0 < rows; u0 += kStridedRows) {
            const std::int64_t u1 = std::min(rows, u0 + kStridedRows);
            plan.beginGroup(r + u0 * l, l, u1 - u0);
            plan.addSegment(r, l, s.causal ? u1 : rows, /*masked=*/s.causal, PatternReason::Stride);
        }
    }
}

// stride 1 with a band: every key, the band's as local and the others as strided, as three masked
// segments of consecutive keys per block of rows.
void addUnitStrideUnion(DensePlan& plan, const StridedSpec& s, std::int64_t n) {
    for (std::int64_t i0 = 0; i0 < n; i0 += kBandRows) {
        const std::int64_t i1 = std::min(n, i0 + kBandRows);
        plan.beginGroup(i0, 1, i1 - i0);
        plan.addSegment(0, 1, std::max<std::int64_t>(0, i1 - 1 - s.band), /*masked=*/true, PatternReason::Stride);
        const std::int64_t k0 = std::max<std::int64_t>(0, i0 - s.band), k1 = s.causal ? i1 : std::min(n, i1 + s.band);
        plan.addSegment(k0, 1, k1 - k0, /*masked=*/true, PatternReason::Local);
        if (!s.causal) {
            const std::int64_t a0 = std::min(n, i0 + s.band + 1);
            plan.addSegment(a0, 1, n - a0, /*masked=*/true, PatternReason::Stride);
        }
    }
}

DensePlan headPlan(const StridedSpec& s, std::int64_t n, bool local, bool strided) {
    DensePlan plan;
    const std::int64_t l = s.stride, band = s.band;
    const bool causal = s.causal;
    if (local && strided && l == 1) {
        addUnitStrideUnion(plan, s, n);
        plan.range = [band, causal, n](std::int64_t i, std::int64_t segInGroup, const DenseSegment& seg,
                                       std::int64_t& lo, std::int64_t& hi) {
            if (segInGroup == 0) {  // the keys before the band
                lo = 0;
                hi = i - band;
            } else if (segInGroup == 1) {  // the band
                lo = i - band - seg.keyStart;
                hi = (causal ? i : i + band) - seg.keyStart + 1;
            } else {  // the keys after the band (non-causal)
                lo = i + band + 1 - seg.keyStart;
                hi = n - seg.keyStart;
            }
        };
        return plan;
    }
    if (local) addBand(plan, s, n);
    if (strided && local) {
        // keys j ≡ i (mod l) outside [i - band, i + band]: j <= i - gap·l (and j >= i + gap·l)
        plan.singleCover = false;
        plan.strided = {l, band / l + 1, !causal};
    } else if (strided) {
        addResidues(plan, s, n);
    }
    plan.range = [band, l, causal](std::int64_t i, std::int64_t, const DenseSegment& seg, std::int64_t& lo,
                                   std::int64_t& hi) {
        if (seg.reason == PatternReason::Local) {  // the band
            lo = i - band - seg.keyStart;
            hi = (causal ? i : i + band) - seg.keyStart + 1;
        } else {  // strided keys r + s·l <= i (causal strided-only heads)
            lo = 0;
            hi = (i - seg.keyStart) / l + 1;
        }
    };
    return plan;
}

}  // namespace

BlockPattern sparseStridedPattern(const ParamValues& params, std::int64_t heads, std::int64_t n) {
    StridedSpec s;
    s.stride = paramInt(params, "stride");
    if (s.stride > n)
        throw EngineError(ErrorCode::InvalidArgument, "sparse_strided: parameter 'stride' must be in [1, n] = [1, " +
                                                          std::to_string(n) + "], got " + std::to_string(s.stride));
    s.causal = paramBool(params, "causal");
    s.band = paramChoice(params, "local") == "paper" ? s.stride : s.stride - 1;
    const bool interleave = paramChoice(params, "combine") == "interleave";
    BlockPattern pattern;
    pattern.n = pattern.m = n;
    if (!interleave) {
        pattern.heads.assign(static_cast<std::size_t>(heads), std::make_shared<const DensePlan>(headPlan(s, n, true, true)));
        return pattern;
    }
    const auto localOnly = std::make_shared<const DensePlan>(headPlan(s, n, true, false));
    const auto stridedOnly = std::make_shared<const DensePlan>(headPlan(s, n, false, true));
    for (std::int64_t h = 0; h < heads; ++h) pattern.heads.push_back(h % 2 == 0 ? localOnly : stridedOnly);
    return pattern;
}

}  // namespace attnscope::engine
