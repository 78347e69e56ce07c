// `sparse_fixed`: the fixed factorisation of the Sparse Transformer (Child et al. 2019, §4):
// A1 = the query's own block of l, A2 = the c "summary" cells of every block
// (pattern/sparse_fixed_pattern.cpp), on the pattern kernel.

#include "pattern/pattern_variants.h"
#include "variants/pattern_variant.h"

namespace attnscope::engine {
namespace {

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
    bool checksQkvValues() const override { return true; }  // in the pattern kernel's copies

    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const double l = static_cast<double>(paramInt(params, "block"));
        const double c = static_cast<double>(paramInt(params, "summary"));
        // (plus the gathered summary keys and values per thread)
        return patternRunBytes(s, l + static_cast<double>(s.m) / l * c) +
               static_cast<std::uint64_t>(2.0 * 3.0 * static_cast<double>(s.m) / l * c * static_cast<double>(s.d) * 4.0);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        requireSelfAttention(m_info.id, qkv);
        const BlockPattern pattern = sparseFixedPattern(params, qkv.heads(), qkv.n());
        AttentionResult result = startResult(m_info.id, params, qkv);
        runPatternVariant(qkv, pattern, ctx, result);
        return result;
    }

private:
    VariantInfo m_info;
};

}  // namespace

std::unique_ptr<Variant> makeSparseFixed() { return std::make_unique<SparseFixed>(); }

}  // namespace attnscope::engine
