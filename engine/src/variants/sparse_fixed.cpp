// `sparse_fixed`: the fixed factorisation of the Sparse Transformer (Child et al. 2019, §4):
// A1 = the query's own block of l, A2 = the c "summary" cells of every block, on the shared
// sparse kernel.

#include "variants/sparse_kernel.h"

#include <algorithm>

namespace attnscope::engine {
namespace {

// Query rows per dense-plan group (the kernel computes them 6 rows at a time).
constexpr std::int64_t kRowsPerGroup = 64;

class SparseFixed final : public Variant {
public:
    SparseFixed() {
        m_info.id = "sparse_fixed";
        m_info.name = "Sparse Transformer (fixed)";
        m_info.paper = "Child et al. 2019, Generating Long Sequences with Sparse Transformers, arXiv 1904.10509";
        m_info.summary = "Every key of the query's block of l, plus the c summary cells of every block.";
        m_info.params.push_back(intParam("block", 8, 1, 1 << 24, "Block length l (at most n; n need not be a multiple)."));
        m_info.params.push_back(intParam("summary", 2, 1, 1 << 24, "Summary cells c per block (1..l): by default the last c."));
        m_info.params.push_back(boolParam("causal", true, "Only keys j <= i (the paper's setting)."));
        m_info.params.push_back(intListParam("summary_offsets", {}, 0, 1 << 24,
                                             "Start of the summary cells inside each block, one value or one per head "
                                             "(0..l-c); empty = l-c, the last c cells."));
    }

    const VariantInfo& info() const override { return m_info; }
    bool checksQkvValues() const override { return true; }  // in the sparse kernel (runSparseKernel)

    std::uint64_t denseBytes(const ProblemShape& s, const ParamValues& params, bool keepWeights) const override {
        const double l = static_cast<double>(paramInt(params, "block"));
        const double c = static_cast<double>(paramInt(params, "summary"));
        const double perRow = l + static_cast<double>(s.m) / l * c;
        const bool perHead = std::get<std::vector<std::int64_t>>(params.at("summary_offsets")).size() > 1;
        return sparsePatternBytes(s, perRow * static_cast<double>(s.n), perHead, keepWeights);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    VariantInfo m_info;
};

AttentionResult SparseFixed::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(m_info.id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n();
    const std::int64_t l = paramInt(params, "block"), c = paramInt(params, "summary");
    const bool causal = paramBool(params, "causal");
    if (l > n)
        throw EngineError(ErrorCode::InvalidArgument, "sparse_fixed: parameter 'block' must be in [1, n] = [1, " +
                                                          std::to_string(n) + "], got " + std::to_string(l));
    if (c > l)
        throw EngineError(ErrorCode::InvalidArgument, "sparse_fixed: parameter 'summary' must be in [1, block] = [1, " +
                                                          std::to_string(l) + "], got " + std::to_string(c));
    std::vector<std::int64_t> offsets = std::get<std::vector<std::int64_t>>(params.at("summary_offsets"));
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
    const bool perHead = std::any_of(offsets.begin(), offsets.end(), [&](std::int64_t o) { return o != offsets[0]; });
    const auto offsetOf = [&](std::int64_t h) { return offsets.size() == 1 ? offsets[0] : offsets[static_cast<std::size_t>(h)]; };
    const auto isSummary = [&](std::int64_t j, std::int64_t o) { return j % l >= o && j % l < o + c; };

    // Rows come out sorted and distinct (summary runs of earlier blocks, the own block, summary
    // runs of later blocks): written straight into the CSR, one run of c cells at a time.
    ctx.beginStage("pattern");  // listing the pattern (counters.stages)
    const std::int64_t rowSets = perHead ? heads : 1;
    PatternBuilder builder(ctx.pool(), n, n, perHead, rowSets, rowSets * n * (l + (n / l + 1) * c));
    for (std::int64_t h = 0; h < rowSets; ++h) {
        const std::int64_t o = offsetOf(h);
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t b0 = (i / l) * l, b1 = causal ? i : std::min(n, b0 + l) - 1;
            const std::int64_t last = causal ? i : n - 1;
            for (std::int64_t s0 = 0; s0 + o < b0; s0 += l)  // runs [s0 + o, s0 + o + c) below b0
                builder.appendRange(s0 + o, 1, std::min(s0 + o + c, b0) - (s0 + o), PatternReason::Summary);
            builder.appendRange(b0, 1, b1 - b0 + 1, PatternReason::Local);
            for (std::int64_t s0 = b0 + l; s0 + o <= last; s0 += l)
                builder.appendRange(s0 + o, 1, std::min(s0 + o + c - 1, last) - (s0 + o) + 1, PatternReason::Summary);
            builder.closeRow();
        }
    }

    ctx.endStage();

    AttentionResult result = startResult(m_info.id, params, qkv);
    const auto tiles = [&](int h, SparseTiles& t) {
        const std::int64_t o = offsetOf(h);
        std::vector<std::int32_t> summaries;
        for (std::int64_t j = 0; j < n; ++j)
            if (isSummary(j, o)) summaries.push_back(static_cast<std::int32_t>(j));
        for (std::int64_t b0 = 0; b0 < n; b0 += l) {
            const std::int64_t bEnd = std::min(n, b0 + l);
            for (std::int64_t i0 = b0; i0 < bEnd; i0 += kSparseRowsPerTile) {
                const std::int64_t i1 = std::min(bEnd, i0 + kSparseRowsPerTile);
                t.addRange(i0, 1, i1 - i0, b0, 1, (causal ? i1 : bEnd) - b0);
                // summary cells of the other blocks (causal: the earlier ones), gathered
                const auto end = causal ? std::lower_bound(summaries.begin(), summaries.end(), static_cast<std::int32_t>(b0))
                                        : summaries.end();
                t.addList(i0, 1, i1 - i0, std::vector<std::int32_t>(summaries.begin(), end));
            }
        }
    };
    // Fast path: every summary cell of the head gathered once, in order (plan.gatheredKeys), so
    // that the rows of one block attend one run of them (the earlier blocks' cells; non-causal
    // also the later ones) and their own block (masked to j <= i when causal). A causal row's keys
    // are then one interval, [0, earlier cells + i - b0 + 1): the kernel computes each block of
    // rows over their union, so the own-block triangle costs no masked half.
    const auto densePlan = [&](int h, DensePlan& plan) {
        const std::int64_t o = offsetOf(h);
        std::vector<std::int64_t> before;  // gathered cells of the blocks before block b
        for (std::int64_t s0 = 0; s0 < n; s0 += l) {
            before.push_back(static_cast<std::int64_t>(plan.gatheredKeys.size()));
            for (std::int64_t j = s0 + o; j < std::min(n, s0 + o + c); ++j)
                plan.gatheredKeys.push_back(static_cast<std::int32_t>(j));
        }
        const auto total = static_cast<std::int64_t>(plan.gatheredKeys.size());
        for (std::int64_t b0 = 0, bi = 0; b0 < n; b0 += l, ++bi) {
            const std::int64_t bEnd = std::min(n, b0 + l);
            const std::int64_t own0 = before[static_cast<std::size_t>(bi)];
            const std::int64_t own1 =
                bi + 1 < static_cast<std::int64_t>(before.size()) ? before[static_cast<std::size_t>(bi + 1)] : total;
            for (std::int64_t i0 = b0; i0 < bEnd; i0 += kRowsPerGroup) {
                const std::int64_t i1 = std::min(bEnd, i0 + kRowsPerGroup);
                plan.beginGroup(i0, 1, i1 - i0);
                if (own0 > 0) plan.addGatheredSegment(0, own0);
                plan.addSegment(b0, 1, (causal ? i1 : bEnd) - b0, /*masked=*/causal);
                if (!causal && total > own1) plan.addGatheredSegment(own1, total - own1);
            }
        }
        plan.range = [](std::int64_t i, std::int64_t, const DenseSegment& seg, std::int64_t& lo, std::int64_t& hi) {
            lo = 0;
            hi = i - seg.keyStart + 1;  // causal: keys b0..i of the own block
        };
        return true;
    };
    runPatternVariant(qkv, builder.finish(), tiles, ctx, result, densePlan);
    result.pattern.causal = causal;
    return result;
}

}  // namespace

std::unique_ptr<Variant> makeSparseFixed() { return std::make_unique<SparseFixed>(); }

}  // namespace attnscope::engine
