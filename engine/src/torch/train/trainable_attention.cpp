#include "torch/tensors/tensor_views.h"
#include "torch/train/trainable_attention.h"

#include "attention/run/request_checks.h"
#include "base/runtime/run_context.h"
#include "attention/catalog/result_weights.h"

#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

at::Tensor fromPlain(const PlainTensor& t) {
    return at::from_blob(const_cast<float*>(t.f32.data()), t.shape, at::kFloat).clone();
}

/// Feature attention in its quadratic form (exact for the sizes the trainer uses):
/// out = (A v) / (A 1 + eps) with A = phi(q) phi(k)^T, lower-triangular when causal.
at::Tensor featureQuadratic(const at::Tensor& phiQ, const at::Tensor& phiK, const at::Tensor& v, bool causal, double eps,
                            bool epsPerFeatureSum) {
    at::Tensor a = at::matmul(phiQ, phiK.transpose(-1, -2));
    if (causal) a = a.tril();
    at::Tensor den = a.sum(-1, true);
    if (eps != 0.0) den = epsPerFeatureSum ? den + eps * phiQ.sum(-1, true) : den + eps;
    return at::matmul(a, v) / den;
}

}  // namespace

TrainableAttention::TrainableAttention(const Variant& variant, const ParamValues& params, std::int64_t heads,
                                       std::int64_t n, std::int64_t headDim, std::uint64_t seed, BufferPool& pool) {
    const std::string& id = variant.info().id;
    m_scale = 1.0 / std::sqrt(static_cast<double>(headDim));
    static const ProgressFn kNoProgress;
    RunContext ctx(pool, kNoProgress);
    ctx.seed = seed;
    // The draws and the pattern do not depend on the values of Q and K for these variants.
    const Qkv probe = qkvOf(at::randn({heads, n, headDim}, at::kFloat), at::randn({heads, n, headDim}, at::kFloat),
                            at::randn({heads, n, headDim}, at::kFloat));
    AttentionResult r = variant.run(probe, params, ctx);
    if (auto attached = attachWeights(r, probe.q, probe.k, {}); !attached)
        throw EngineError(ErrorCode::Internal, attached.error().message);

    switch (variant.info().training) {
    case Training::Linformer:
        m_kind = Kind::Linformer;
        m_e = fromPlain(r.diagnostics.at("E"));
        m_f = fromPlain(r.diagnostics.at("F"));
        break;
    case Training::Linear:
        m_kind = Kind::Linear;
        m_causal = paramBool(params, "causal");
        m_eps = paramFloat(params, "eps");
        m_epsPerFeatureSum = paramChoice(params, "eps_mode") == "kcumsum";
        break;
    case Training::Performer:
        m_kind = Kind::Performer;
        m_projection = fromPlain(r.diagnostics.at("projection"));
        m_causal = paramBool(params, "causal");
        m_relu = paramChoice(params, "kernel") == "relu";
        m_featureEps = paramFloat(params, "feature_eps");
        m_eps = m_causal ? paramFloat(params, "causal_eps") : 0.0;
        m_epsPerFeatureSum = true;
        break;
    case Training::Pattern: {
        m_kind = Kind::Pattern;
        // A pattern with one key more than there are tokens has a relay (Star-Transformer): the
        // mean of the keys and values, appended in operator().
        const std::int64_t keys = r.m;
        m_relay = keys == n + 1;
        if (keys != n && !m_relay)
            throw EngineError(ErrorCode::Unsupported, id + ": its pattern has " + std::to_string(keys) + " keys for " +
                                                          std::to_string(n) + " tokens");
        // count: [heads, n, keys], the times the pattern lists each key (0 outside it)
        at::Tensor count = at::zeros({heads, n, keys}, at::kFloat);
        float* c = count.data_ptr<float>();
        for (std::int64_t h = 0; h < heads; ++h) {
            const WeightTile t = r.weights->tile(static_cast<int>(h), 0, n, 0, keys, /*withReasons=*/true);
            for (std::size_t e = 0; e < t.multiplicity.size(); ++e) c[h * n * keys + static_cast<std::int64_t>(e)] = t.multiplicity[e];
        }
        if (at::any(count.sum(-1) == 0).item<bool>())
            throw EngineError(ErrorCode::InvalidArgument,
                              id + ": with these parameters some query has no key to attend at " + std::to_string(n) +
                                  " tokens; the trainer needs every row attended");
        m_bias = count.log();  // log 0 = -inf: outside the pattern
        break;
    }
    case Training::None:
        throw EngineError(ErrorCode::Unsupported, "variant '" + id + "' has no differentiable path in the trainer yet");
    }
}

at::Tensor TrainableAttention::operator()(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) const {
    switch (m_kind) {
    case Kind::Pattern: {
        const at::Tensor keys = m_relay ? at::cat({k, k.mean(-2, true)}, -2) : k;
        const at::Tensor values = m_relay ? at::cat({v, v.mean(-2, true)}, -2) : v;
        at::Tensor scores = at::matmul(q, keys.transpose(-1, -2)) * m_scale + m_bias;
        return at::matmul(at::softmax(scores, -1), values);
    }
    case Kind::Linformer: {
        const at::Tensor e = m_e.dim() == 2 ? m_e : m_e.unsqueeze(0);  // broadcast over the batch
        const at::Tensor f = m_f.dim() == 2 ? m_f : m_f.unsqueeze(0);
        const at::Tensor kProj = at::matmul(e, k), vProj = at::matmul(f, v);
        return at::matmul(at::softmax(at::matmul(q, kProj.transpose(-1, -2)) * m_scale, -1), vProj);
    }
    case Kind::Linear:
        return featureQuadratic(at::elu(q) + 1.0, at::elu(k) + 1.0, v, m_causal, m_eps, m_epsPerFeatureSum);
    case Kind::Performer: {
        const std::int64_t d = q.size(-1), features = m_projection.size(1);
        const double normalizer = std::pow(static_cast<double>(d), -0.25);
        const at::Tensor wT = (m_projection * normalizer).transpose(1, 2);  // [H, d, m]
        at::Tensor qDash = at::matmul(q, wT), kDash = at::matmul(k, wT);
        at::Tensor phiQ, phiK;
        if (m_relu) {
            phiQ = at::relu(qDash) + 1e-3;
            phiK = at::relu(kDash) + 1e-3;
        } else {
            const double half = 0.5 * normalizer * normalizer;
            const double ratio = 1.0 / std::sqrt(static_cast<double>(features));
            // The stabilisers are constants for the gradient, as in the reference.
            const at::Tensor qMax = at::amax(qDash, {-1}, true).detach();
            const at::Tensor kMax = at::amax(kDash, {-2, -1}, true).detach();
            phiQ = (at::exp(qDash - q.pow(2).sum(-1, true) * half - qMax) + m_featureEps) * ratio;
            phiK = (at::exp(kDash - k.pow(2).sum(-1, true) * half - kMax) + m_featureEps) * ratio;
        }
        return featureQuadratic(phiQ, phiK, v, m_causal, m_eps, m_epsPerFeatureSum);
    }
    }
    return {};
}

}  // namespace attnscope::engine
