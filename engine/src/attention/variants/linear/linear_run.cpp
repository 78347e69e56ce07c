// `linear`: Linear Transformer (Katharopoulos et al. 2020, arXiv 2006.16236), phi(x) = elu(x) + 1.

#include "attention/variants/shared/feature_attention.h"

#include "base/kernels/softmax_kernel.h"

#include <algorithm>

namespace attnscope::engine {
namespace {

// phi(x) = elu(x) + 1, element by element: r = d features.
class EluPlusOne final : public FeatureMap {
public:
    explicit EluPlusOne(std::int64_t d) : m_d(d) {}
    std::int64_t features() const override { return m_d; }
    void queryFeatures(std::int64_t, const float* rows, std::int64_t count, float* out) const override { apply(rows, count, out); }
    void keyFeatures(std::int64_t, const float* rows, std::int64_t count, float* out) const override { apply(rows, count, out); }

private:
    void apply(const float* rows, std::int64_t count, float* out) const {
        std::copy(rows, rows + count * m_d, out);
        eluPlusOneInPlace(out, count * m_d);
    }
    std::int64_t m_d;
};

class LinearAttention final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // in featureAttention, head by head
    bool multipliesWithBlas() const override { return true; }
    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues&) const override {
        return static_cast<double>(s.d);  // φ(q) · (φ(K)ᵀ V): d features
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues&) const override {
        // output and den (the features exist a block of rows at a time, in each thread's scratch)
        return static_cast<std::uint64_t>(s.heads * s.n) * static_cast<std::uint64_t>(s.d * 4 + 4);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        AttentionResult result = startResult(info().id, params, qkv);
        ctx.beginStage("attention");
        FeatureAttentionSpec spec;
        spec.causal = paramBool(params, "causal");
        spec.eps = paramFloat(params, "eps");
        spec.epsMode = paramChoice(params, "eps_mode") == "kcumsum" ? FeatureEpsMode::KeyCumsum : FeatureEpsMode::Denominator;
        spec.slot = info().id;
        EluPlusOne phi(qkv.d());
        featureAttention(qkv, phi, spec, ctx, result);
        ctx.endStage();
        result.counters = ctx.counters();
        return result;
    }
};

}  // namespace

namespace variants::linear {
std::unique_ptr<Variant> kernel() { return std::make_unique<LinearAttention>(); }
}  // namespace variants::linear

}  // namespace attnscope::engine
