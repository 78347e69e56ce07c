// `sparse_strided`: the strided factorisation of the Sparse Transformer (Child et al. 2019, §4):
// a local band A1 and a strided set A2 = {j : (i - j) mod l = 0}, as their union on every head
// or interleaved over heads (pattern/sparse_strided_pattern.cpp), never as an n x n matrix.

#include "attention/variants/sparse_strided/sparse_strided_pattern.h"
#include "attention/variants/shared/pattern_variant.h"

#include <algorithm>

namespace attnscope::engine {
namespace {

class SparseStrided final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // in the pattern kernel's copies

    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        const double l = static_cast<double>(std::max<std::int64_t>(paramInt(params, "stride"), 1));
        return std::min(static_cast<double>(s.m), l + static_cast<double>(s.m) / l);
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const double l = static_cast<double>(std::max<std::int64_t>(paramInt(params, "stride"), 1));
        return patternRunBytes(s, 2 * l + 1 + static_cast<double>(s.m) / l);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        requireSelfAttention(info().id, qkv);
        const BlockPattern pattern = sparseStridedPattern(params, qkv.heads(), qkv.n());
        AttentionResult result = startResult(info().id, params, qkv);
        runPatternVariant(qkv, pattern, ctx, result);
        return result;
    }
};

}  // namespace

namespace variants::sparse_strided {
std::unique_ptr<Variant> kernel() { return std::make_unique<SparseStrided>(); }
}  // namespace variants::sparse_strided

}  // namespace attnscope::engine
