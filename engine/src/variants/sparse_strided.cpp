// `sparse_strided`: the strided factorisation of the Sparse Transformer (Child et al. 2019, §4):
// a local band A1 and a strided set A2 = {j : (i - j) mod l = 0}, as their union on every head
// or interleaved over heads. Computed by the shared sparse kernel, never as an n x n matrix.

#include "variants/sparse_kernel.h"

#include <algorithm>
#include <limits>

namespace attnscope::engine {
namespace {

// Rows per dense-plan group: consecutive (the band), and of one residue mod l (strided-only heads).
// The kernel computes a group 6 rows at a time over those rows' keys only (134 band scores per row
// for 129 allowed), so the group size no longer sets the waste; 96 rows measured 2-3 % faster than
// 48 at 2k tokens (fewer groups to set up) and the same at 1k and 8k, 192 no better.
constexpr std::int64_t kStridedRows = 96;
constexpr std::int64_t kBandRows = 96;

class SparseStrided final : public Variant {
public:
    SparseStrided() {
        m_info.id = "sparse_strided";
        m_info.name = "Sparse Transformer (strided)";
        m_info.paper = "Child et al. 2019, Generating Long Sequences with Sparse Transformers, arXiv 1904.10509";
        m_info.summary = "Local band of l+1 (paper) or l (OpenAI) keys plus every l-th key; union or interleaved heads.";
        m_info.params.push_back(intParam("stride", 8, 1, 1 << 24, "Stride l (about sqrt(n)); must be at most n."));
        m_info.params.push_back(choiceParam("local", "paper", {"paper", "openai"},
                                            "Local band: paper = keys i-l..i (l+1 keys), openai = keys i-l+1..i (l keys)."));
        m_info.params.push_back(boolParam("causal", true, "Only keys j <= i (the paper's setting)."));
        m_info.params.push_back(choiceParam("combine", "union", {"union", "interleave"},
                                            "union: every head sees local and strided keys; interleave: even heads "
                                            "local, odd heads strided."));
    }

    const VariantInfo& info() const override { return m_info; }
    bool checksQkvValues() const override { return true; }  // in the sparse kernel (runSparseKernel)

    std::uint64_t denseBytes(const ProblemShape& s, const ParamValues& params, bool keepWeights) const override {
        const double l = static_cast<double>(std::max<std::int64_t>(paramInt(params, "stride"), 1));
        const double perRow = 2 * l + 1 + static_cast<double>(s.m) / l;
        return sparsePatternBytes(s, perRow * static_cast<double>(s.n), paramChoice(params, "combine") == "interleave",
                                  keepWeights);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    VariantInfo m_info;
};

AttentionResult SparseStrided::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(m_info.id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n();
    const std::int64_t l = paramInt(params, "stride");
    if (l > n)
        throw EngineError(ErrorCode::InvalidArgument, "sparse_strided: parameter 'stride' must be in [1, n] = [1, " +
                                                          std::to_string(n) + "], got " + std::to_string(l));
    const bool causal = paramBool(params, "causal");
    const bool interleave = paramChoice(params, "combine") == "interleave";
    // Keys on each side of the query inside the local band.
    const std::int64_t band = paramChoice(params, "local") == "paper" ? l : l - 1;

    // pattern: union -> n rows shared by all heads; interleave -> even heads local, odd strided.
    // Rows are produced in ascending key order without duplicates (strided keys below the band,
    // the band, strided keys above it), so they go straight into the CSR.
    ctx.beginStage("pattern");  // listing the pattern (counters.stages)
    const std::int64_t rowSets = interleave ? heads : 1;
    PatternBuilder builder(ctx.pool(), n, n, interleave, rowSets, rowSets * n * (2 * band + 3 + n / l));
    for (std::int64_t h = 0; h < rowSets; ++h) {
        const bool local = !interleave || h % 2 == 0;
        const bool strided = !interleave || h % 2 == 1;
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t b0 = local ? std::max<std::int64_t>(0, i - band) : n;
            const std::int64_t b1 = local ? (causal ? i : std::min(n - 1, i + band)) : -1;
            if (strided) {
                const std::int64_t lim = std::min(b0, i + 1), r0 = i % l;
                if (lim > r0) builder.appendRange(r0, l, (lim - r0 + l - 1) / l, PatternReason::Stride);
            }
            if (b1 >= b0) builder.appendRange(b0, 1, b1 - b0 + 1, PatternReason::Local);
            if (strided && !causal) {
                const std::int64_t from = local ? b1 + 1 : i + 1;
                const std::int64_t j0 = i + ((from - i + l - 1) / l) * l;
                if (j0 < n) builder.appendRange(j0, l, (n - j0 + l - 1) / l, PatternReason::Stride);
            }
            builder.closeRow();
        }
    }

    ctx.endStage();

    AttentionResult result = startResult(m_info.id, params, qkv);
    const auto tiles = [&](int h, SparseTiles& t) {
        const bool local = !interleave || h % 2 == 0;
        const bool strided = !interleave || h % 2 == 1;
        if (local)
            addResidueTiles(t, n, n, 1, kSparseRowsPerTile, [&](std::int64_t i0, std::int64_t i1) {
                return std::make_pair(i0 - band, causal ? i1 : i1 + band);
            });
        if (strided)  // rows of one residue share their strided keys: keys r + s·l, s <= u
            addResidueTiles(t, n, n, l, kSparseRowsPerTile, [&](std::int64_t, std::int64_t u1) {
                return std::make_pair(std::int64_t{0}, causal ? u1 : std::numeric_limits<std::int64_t>::max());
            });
    };
    // Fast path: the local band as blocks of consecutive rows against keys [i0 - band, i1) (non-
    // causal: to i1 + band), masked to [i - band, i] (to i + band). With `union` the strided keys
    // outside the band go to the strided keys pass (strided_keys_pass.h), which adds them to the
    // band's running softmax, 8 residues at a time. A strided-only head (`interleave`) is groups of
    // rows of one residue r mod l against keys r, r + l, ... (causal: masked to the keys <= i).
    const auto densePlan = [&](int h, DensePlan& plan) {
        if (l == 1) return false;
        const bool local = !interleave || h % 2 == 0;
        const bool strided = !interleave || h % 2 == 1;
        plan.singleCover = !(local && strided);
        if (local)
            for (std::int64_t i0 = 0; i0 < n; i0 += kBandRows) {
                const std::int64_t i1 = std::min(n, i0 + kBandRows), k0 = std::max<std::int64_t>(0, i0 - band);
                const std::int64_t k1 = causal ? i1 : std::min(n, i1 + band);
                plan.addGroup(i0, 1, i1 - i0, {DenseSegment{k0, 1, k1 - k0}}, 1);
            }
        if (local && strided) {
            // keys j ≡ i (mod l) outside [i - band, i + band]: j <= i - gap·l (and j >= i + gap·l)
            plan.strided = {l, band / l + 1, !causal};
        } else if (strided) {
            for (std::int64_t r = 0; r < std::min(l, n); ++r) {
                const std::int64_t rows = (n - r + l - 1) / l;  // = the residue's keys (m = n)
                for (std::int64_t u0 = 0; u0 < rows; u0 += kStridedRows) {
                    const std::int64_t u1 = std::min(rows, u0 + kStridedRows);
                    // causal: keys r + s·l <= the chunk's last row (masked per row)
                    const std::int64_t keys = causal ? u1 : rows;
                    plan.addGroup(r + u0 * l, l, u1 - u0, {DenseSegment{r, l, keys}}, causal ? 1 : 0);
                }
            }
        }
        plan.range = [band, l, causal](std::int64_t i, std::int64_t, const DenseSegment& seg, std::int64_t& lo,
                                       std::int64_t& hi) {
            if (seg.keyStep == 1) {  // local band segment (l > 1)
                lo = i - band - seg.keyStart;
                hi = (causal ? i : i + band) - seg.keyStart + 1;
                return;
            }
            lo = 0;  // strided keys r + s·l <= i (causal strided-only heads)
            hi = (i - seg.keyStart) / l + 1;
        };
        return true;
    };
    runPatternVariant(qkv, builder.finish(), tiles, ctx, result, densePlan);
    result.pattern.causal = causal;
    return result;
}

}  // namespace

std::unique_ptr<Variant> makeSparseStrided() { return std::make_unique<SparseStrided>(); }

}  // namespace attnscope::engine
