// `linear`: Linear Transformer (Katharopoulos et al. 2020, arXiv 2006.16236), phi(x) = elu(x) + 1.

#include "variants/feature_attention.h"

#include "kernels/softmax_kernel.h"

namespace attnscope::engine {
namespace {

class LinearAttention final : public Variant {
public:
    LinearAttention() {
        m_info.id = "linear";
        m_info.name = "Linear Transformer";
        m_info.paper = "Katharopoulos et al. 2020, Transformers are RNNs, arXiv 2006.16236";
        m_info.summary = "phi(Q) (phi(K)^T V) / phi(Q) sum phi(K) with phi = elu + 1; O(n) memory, causal by prefix sums.";
        m_info.params = {
            ParamSpec{"causal", ParamType::Bool, false, 0, 1, {}, "Prefix-sum (RNN) form: key j visible iff j <= i."},
            ParamSpec{"eps", ParamType::Float, 1e-6, 0.0, 1.0, {}, "Stabiliser of the denominator."},
            ParamSpec{"eps_mode", ParamType::Choice, std::string("denominator"), 0, 0, {"denominator", "kcumsum"},
                      "denominator: phi(q).z + eps (idiap); kcumsum: phi(q).(z + eps) (lucidrains)."},
        };
    }
    const VariantInfo& info() const override { return m_info; }

    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        // output and den; causal: phi(Q) and phi(K) ([H, n, d] each) and the chunks' state
        const auto cells = static_cast<std::uint64_t>(s.heads * s.n);
        std::uint64_t bytes = cells * static_cast<std::uint64_t>(s.d * 4 + 4);
        if (paramBool(params, "causal")) bytes += 2 * cells * static_cast<std::uint64_t>(s.d * 4) + 3 * 128 * 128 * 4 * s.heads;
        return bytes;
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        AttentionResult result = startResult(m_info.id, params, qkv);
        ctx.beginStage("attention");
        FeatureAttentionSpec spec;
        spec.causal = paramBool(params, "causal");
        spec.eps = paramFloat(params, "eps");
        spec.epsMode = paramChoice(params, "eps_mode") == "kcumsum" ? FeatureEpsMode::KeyCumsum : FeatureEpsMode::Denominator;
        spec.slot = m_info.id;
        if (!spec.causal) {
            // Only the output is wanted: phi(Q) and phi(K) are never materialised.
            streamedFeatureAttention(qkv, eluPlusOneInPlace, spec, ctx, result);
        } else {
            // phiQ: [H, n, d], phiK: [H, m, d]; padded keys get zero features (idiap's length
            // mask). Pooled: two fresh [H, n, d] tensors per call page-faulted 64 MiB at 16k
            // tokens, which took more time than the products themselves.
            at::Tensor phiQ = ctx.pool().workspace("linear.phi_q", {qkv.heads(), qkv.n(), qkv.d()});
            at::Tensor phiK = ctx.pool().workspace("linear.phi_k", {qkv.heads(), qkv.m(), qkv.d()});
            at::elu_out(phiQ, qkv.q).add_(1.0);
            at::elu_out(phiK, qkv.k).add_(1.0);
            if (const at::Tensor keep = keyKeepMask(qkv); keep.defined()) phiK.mul_(keep.view({1, qkv.m(), 1}));
            featureAttention(phiQ, phiK, qkv.v, spec, ctx, result);
        }
        ctx.endStage();
        result.counters = ctx.counters();
        return result;
    }

private:
    VariantInfo m_info;
};

}  // namespace

std::unique_ptr<Variant> makeLinearAttention() { return std::make_unique<LinearAttention>(); }

}  // namespace attnscope::engine
