// `sparse_fixed`: the fixed factorisation of the Sparse Transformer (Child et al. 2019, §4):
// A1 = the query's own block of l, A2 = the c "summary" cells of every block
// (pattern/sparse_fixed_pattern.cpp), on the pattern kernel.

#include "attention/variants/sparse_fixed/sparse_fixed_pattern.h"
#include "attention/variants/shared/pattern_variant.h"

namespace attnscope::engine {
namespace {

class SparseFixed final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // in the pattern kernel's copies

    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        const double l = static_cast<double>(paramInt(params, "block")), c = static_cast<double>(paramInt(params, "summary"));
        return std::min(static_cast<double>(s.m), l + static_cast<double>(s.m) / l * c);
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const double l = static_cast<double>(paramInt(params, "block"));
        const double c = static_cast<double>(paramInt(params, "summary"));
        // (plus the gathered summary keys and values per thread)
        return patternRunBytes(s, l + static_cast<double>(s.m) / l * c) +
               static_cast<std::uint64_t>(2.0 * 3.0 * static_cast<double>(s.m) / l * c * static_cast<double>(s.d) * 4.0);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        requireSelfAttention(info().id, qkv);
        const BlockPattern pattern = sparseFixedPattern(params, qkv.heads(), qkv.n());
        AttentionResult result = startResult(info().id, params, qkv);
        runPatternVariant(qkv, pattern, ctx, result);
        return result;
    }
};

}  // namespace

namespace variants::sparse_fixed {
std::unique_ptr<Variant> kernel() { return std::make_unique<SparseFixed>(); }
}  // namespace variants::sparse_fixed

}  // namespace attnscope::engine
