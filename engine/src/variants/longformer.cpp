// `longformer`: Longformer attention (Beltagy et al. 2020): a (dilated) sliding window of w keys
// per side plus symmetric global tokens, on the shared sparse kernel (linear in n).

#include "variants/sparse_kernel.h"

#include <algorithm>
#include <limits>

namespace attnscope::engine {
namespace {

// Query rows per dense band tile: the tile is kBandRows x (kBandRows + 2w) scores, of which
// (2w + 1) / (kBandRows + 2w) are in the window.
// 64 rows: the same CPU time per call as 128 rows at 16k tokens (measured), 12 % instead of 25 %
// masked scores at w = 256, and half the scratch; 32 rows made the SGEMMs too small.
constexpr std::int64_t kBandRows = 64;

class Longformer final : public Variant {
public:
    Longformer() {
        m_info.id = "longformer";
        m_info.name = "Longformer";
        m_info.paper = "Beltagy et al. 2020, Longformer: The Long-Document Transformer, arXiv 2004.05150";
        m_info.summary = "Sliding window i-w*d .. i+w*d in steps of d, plus global tokens that attend to and are "
                         "attended by every token.";
        m_info.params.push_back(intParam("window", 4, 0, 1 << 24,
                                         "Keys per side w (one-sided, as allenai; HF attention_window = 2w). Below n."));
        m_info.params.push_back(intListParam("dilation", {1}, 1, 1 << 20,
                                             "Dilation d: one value for all heads, or one value per head."));
        m_info.params.push_back(intListParam("global", {}, 0, std::numeric_limits<std::int32_t>::max(),
                                             "Global token indices (distinct, below n)."));
        m_info.params.push_back(boolParam("causal", false, "Only keys j <= i, global entries included."));
    }

    const VariantInfo& info() const override { return m_info; }
    bool checksQkvValues() const override { return true; }  // in the sparse kernel (runSparseKernel)

    std::uint64_t denseBytes(const ProblemShape& s, const ParamValues& params, bool keepWeights) const override {
        const double w = static_cast<double>(paramInt(params, "window"));
        const double g = static_cast<double>(std::get<std::vector<std::int64_t>>(params.at("global")).size());
        const auto& dil = std::get<std::vector<std::int64_t>>(params.at("dilation"));
        const bool perHead = dil.size() > 1;
        const double perHead1 = static_cast<double>(s.n) * (2 * w + 1 + g) + g * static_cast<double>(s.m);
        return sparsePatternBytes(s, perHead1, perHead, keepWeights);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    VariantInfo m_info;
};

AttentionResult Longformer::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(m_info.id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n();
    const std::int64_t w = paramInt(params, "window");
    const bool causal = paramBool(params, "causal");
    if (w >= n)
        throw EngineError(ErrorCode::InvalidArgument, "longformer: parameter 'window' (keys per side) must be in [0, n-1] = [0, " +
                                                          std::to_string(n - 1) + "], got " + std::to_string(w));
    std::vector<std::int64_t> dilation = std::get<std::vector<std::int64_t>>(params.at("dilation"));
    if (dilation.size() != 1 && static_cast<std::int64_t>(dilation.size()) != heads)
        throw EngineError(ErrorCode::InvalidArgument, "longformer: parameter 'dilation' needs 1 value or one per head (" +
                                                          std::to_string(heads) + "), got " +
                                                          std::to_string(dilation.size()));
    if (dilation.empty()) dilation.push_back(1);
    std::vector<std::int64_t> globals = std::get<std::vector<std::int64_t>>(params.at("global"));
    std::vector<std::uint8_t> isGlobal(static_cast<std::size_t>(n), 0);
    for (std::int64_t g : globals) {
        if (g < 0 || g >= n)
            throw EngineError(ErrorCode::InvalidArgument, "longformer: parameter 'global': index " + std::to_string(g) +
                                                              " is out of range [0, " + std::to_string(n - 1) + "]");
        if (isGlobal[static_cast<std::size_t>(g)])
            throw EngineError(ErrorCode::InvalidArgument,
                              "longformer: parameter 'global': index " + std::to_string(g) + " is listed twice");
        isGlobal[static_cast<std::size_t>(g)] = 1;
    }
    std::sort(globals.begin(), globals.end());
    const bool perHead = std::any_of(dilation.begin(), dilation.end(), [&](std::int64_t d) { return d != dilation[0]; });
    const auto dilationOf = [&](std::int64_t h) { return dilation.size() == 1 ? dilation[0] : dilation[static_cast<std::size_t>(h)]; };

    // Non-global row i: window keys i + t·d (t in [-w, w], t <= 0 when causal) that are not global,
    // then every global key once (VARIANTS.md §4: global keys are not double-counted).
    // Global row: every key (j <= i when causal).
    const std::int64_t g = static_cast<std::int64_t>(globals.size());
    ctx.beginStage("pattern");  // listing the pattern (counters.stages)
    const std::int64_t rowSets = perHead ? heads : 1;
    PatternBuilder builder(ctx.pool(), n, n, perHead, rowSets, rowSets * (n * (2 * w + 1 + g) + g * n));
    for (std::int64_t h = 0; h < rowSets; ++h) {
        const std::int64_t dh = dilationOf(h);
        const PatternReason windowReason = dh == 1 ? PatternReason::Local : PatternReason::Dilated;
        if (globals.empty()) {  // sorted window keys, written straight into the CSR
            for (std::int64_t i = 0; i < n; ++i) {
                const std::int64_t tMin = std::max(-w, -(i / dh));
                const std::int64_t tMax = causal ? 0 : std::min(w, (n - 1 - i) / dh);
                builder.appendRange(i + tMin * dh, dh, tMax - tMin + 1, windowReason);
                builder.closeRow();
            }
            continue;
        }
        // (the keys come out ascending and distinct, so they go straight into the CSR)
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t last = causal ? i : n - 1;
            if (isGlobal[static_cast<std::size_t>(i)]) {
                builder.appendRange(0, 1, last + 1, PatternReason::Global);
                builder.closeRow();
                continue;
            }
            // globals before the window, the window's runs between the globals inside it (a window
            // key that is global is listed once, as global), the globals after it
            const std::int64_t a = i + std::max(-w, -(i / dh)) * dh;
            const std::int64_t b = i + (causal ? 0 : std::min(w, (n - 1 - i) / dh)) * dh;
            std::size_t gi = 0;
            for (; gi < globals.size() && globals[gi] < a; ++gi) builder.append(globals[gi], PatternReason::Global);
            for (std::int64_t j = a; j <= b;) {
                if (gi == globals.size() || globals[gi] > b) {
                    builder.appendRange(j, dh, (b - j) / dh + 1, windowReason);
                    break;
                }
                const std::int64_t key = globals[gi++];
                const std::int64_t run = (key - j + dh - 1) / dh;  // window keys below the global
                builder.appendRange(j, dh, run, windowReason);
                builder.append(key, PatternReason::Global);
                j += run * dh;
                if (j == key) j += dh;
            }
            for (; gi < globals.size() && globals[gi] <= last; ++gi) builder.append(globals[gi], PatternReason::Global);
            builder.closeRow();
        }
    }

    ctx.endStage();

    AttentionResult result = startResult(m_info.id, params, qkv);
    const auto tiles = [&](int h, SparseTiles& t) {
        const std::int64_t dh = dilationOf(h);
        // Rows of one residue mod d share a window of keys of that residue: u-w .. u+w in steps.
        addResidueTiles(t, n, n, dh, kSparseRowsPerTile, [&](std::int64_t u0, std::int64_t u1) {
            return std::make_pair(u0 - w, causal ? u1 : u1 + w);
        });
        std::vector<std::int32_t> globalKeys(globals.begin(), globals.end());
        for (std::int64_t i0 = 0; i0 < n && !globalKeys.empty(); i0 += kSparseRowsPerTile)
            t.addList(i0, 1, std::min(kSparseRowsPerTile, n - i0), globalKeys);
        for (std::int64_t gRow : globals) t.addRange(gRow, 1, 1, 0, 1, causal ? gRow + 1 : n);
    };
    // Fast path: rows u0..u1 of one residue mod d against the contiguous band of keys of that
    // residue, masked to |u - s| <= w (s <= u when causal). With global tokens (dilation 1 only):
    // the window groups take runs of non-global rows; the same rows get a second group against the
    // global keys outside their window, listed twice (masked to those after the window, then to
    // those before it: one interval per row); a run of global rows attends every key.
    const bool anyDilated = std::any_of(dilation.begin(), dilation.end(), [](std::int64_t d) { return d != 1; });
    const auto densePlan = [&](int h, DensePlan& plan) {
        if (!globals.empty() && anyDilated) return false;
        const std::int64_t dh = dilationOf(h);
        if (globals.empty()) {
            for (std::int64_t r = 0; r < std::min(dh, n); ++r) {
                const std::int64_t rows = (n - r + dh - 1) / dh;
                for (std::int64_t u0 = 0; u0 < rows; u0 += kBandRows) {
                    const std::int64_t u1 = std::min(rows, u0 + kBandRows);
                    const std::int64_t s0 = std::max<std::int64_t>(0, u0 - w), s1 = std::min(rows, causal ? u1 : u1 + w);
                    plan.addGroup(r + u0 * dh, dh, u1 - u0, {DenseSegment{r + s0 * dh, dh, s1 - s0}}, 1);
                }
            }
        } else {
            plan.singleCover = false;
            plan.gatheredKeys.assign(globals.begin(), globals.end());
            for (std::int64_t i0 = 0; i0 < n;) {  // runs of global rows, then of the others
                const bool global = isGlobal[static_cast<std::size_t>(i0)] != 0;
                std::int64_t i1 = i0 + 1;
                while (i1 < n && i1 - i0 < kBandRows && (isGlobal[static_cast<std::size_t>(i1)] != 0) == global) ++i1;
                if (global) {
                    plan.addGroup(i0, 1, i1 - i0, {DenseSegment{0, 1, causal ? i1 : n}}, causal ? 1 : 0);
                } else {
                    const std::int64_t k0 = std::max<std::int64_t>(0, i0 - w), k1 = std::min(n, causal ? i1 : i1 + w);
                    plan.addGroup(i0, 1, i1 - i0, {DenseSegment{k0, 1, k1 - k0}}, 1);
                    plan.beginGroup(i0, 1, i1 - i0);
                    if (!causal) plan.addGatheredSegment(0, g, /*masked=*/true);  // after the window
                    plan.addGatheredSegment(0, g, /*masked=*/true);               // before the window
                }
                i0 = i1;
            }
        }
        plan.range = [&, dh](std::int64_t i, std::int64_t segInGroup, const DenseSegment& seg, std::int64_t& lo,
                             std::int64_t& hi) {
            if (seg.gathered) {  // the global keys outside the window [i - w, i + w]
                const auto before = std::lower_bound(globals.begin(), globals.end(), i - w) - globals.begin();
                const auto after = std::upper_bound(globals.begin(), globals.end(), i + w) - globals.begin();
                const bool afterSegment = !causal && segInGroup == 0;
                lo = afterSegment ? after : 0;
                hi = afterSegment ? g : before;
                return;
            }
            if (!globals.empty() && isGlobal[static_cast<std::size_t>(i)]) {  // a global row, causal
                lo = 0;
                hi = i + 1;
                return;
            }
            const std::int64_t u = (i - seg.keyStart) / dh;  // the query's index in the segment
            lo = u - w;
            hi = u + (causal ? 0 : w) + 1;
        };
        return true;
    };
    runPatternVariant(qkv, builder.finish(), tiles, ctx, result, densePlan);
    result.pattern.causal = causal;
    return result;
}

}  // namespace

std::unique_ptr<Variant> makeLongformer() { return std::make_unique<Longformer>(); }

}  // namespace attnscope::engine
