// `sparse_strided`: the strided factorisation of the Sparse Transformer (Child et al. 2019, §4):
// a local band A1 and a strided set A2 = {j : (i - j) mod l = 0}, as their union on every head
// or interleaved over heads (pattern/sparse_strided_pattern.cpp), never as an n x n matrix.

#include "pattern/pattern_variants.h"
#include "variants/pattern_variant.h"

#include <algorithm>

namespace attnscope::engine {
namespace {

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
    bool checksQkvValues() const override { return true; }  // in the pattern kernel's copies

    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const double l = static_cast<double>(std::max<std::int64_t>(paramInt(params, "stride"), 1));
        return patternRunBytes(s, 2 * l + 1 + static_cast<double>(s.m) / l);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        requireSelfAttention(m_info.id, qkv);
        const BlockPattern pattern = sparseStridedPattern(params, qkv.heads(), qkv.n());
        AttentionResult result = startResult(m_info.id, params, qkv);
        runPatternVariant(qkv, pattern, ctx, result);
        return result;
    }

private:
    VariantInfo m_info;
};

}  // namespace

std::unique_ptr<Variant> makeSparseStrided() { return std::make_unique<SparseStrided>(); }

}  // namespace attnscope::engine
