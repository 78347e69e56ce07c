#pragma once
// Attention through feature maps, shared by `linear` (Katharopoulos et al.) and `performer`
// (Choromanski et al.): out_i = phi(q_i)^T S / den_i with S = sum_j phi(k_j) v_j^T, computed in
// O(n) memory; causal with chunked prefix sums. The implied n x m matrix is never built: its
// tiles are recomputed from the features and the row denominators (weights/feature_weights).

#include "variants/variant.h"

#include <string>

namespace attnscope::engine {

enum class FeatureEpsMode {
    Denominator,  ///< den = phi(q).z + eps (idiap fast-transformers)
    KeyCumsum,    ///< den = phi(q).(z + eps) (lucidrains performer, causal)
};

struct FeatureAttentionSpec {
    bool causal = false;
    double eps = 0.0;
    FeatureEpsMode epsMode = FeatureEpsMode::Denominator;
    std::string slot;  ///< buffer-pool slot prefix, the variant id
};

/// phiQ: [H, n, r], phiK: [H, m, r] (non-negative features), v: [H, m, d]. Fills result.output,
/// result.stats["den"] (the denominators of the implied weights A = phiQ phiK^T / den, so that
/// output == A v), rowStatus for rows whose denominator is 0, and counters. Causal requires m == n.
void featureAttention(const at::Tensor& phiQ, const at::Tensor& phiK, const at::Tensor& v,
                      const FeatureAttentionSpec& spec, RunContext& ctx, AttentionResult& result);

/// The same result as featureAttention for a non-causal run and an element-wise feature map (phi applied in place to `count` floats, r = d), computed a block of
/// rows at a time per head: phi(K) and phi(Q) exist only block by block, in cache, so a call
/// streams Q, K and V once and writes the output once.
void streamedFeatureAttention(const Qkv& qkv, void (*phi)(float* values, std::int64_t count),
                              const FeatureAttentionSpec& spec, RunContext& ctx, AttentionResult& result);

/// [m] float: 0 for padded keys, 1 otherwise; undefined when no key is padded.
at::Tensor keyKeepMask(const Qkv& qkv);

/// The exact softmax weights [H, n, m] (causal: j <= i), for approximation diagnostics.
at::Tensor exactSoftmaxWeights(const Qkv& qkv, bool causal);

}  // namespace attnscope::engine
