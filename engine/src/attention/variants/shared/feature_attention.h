#pragma once
// Attention through feature maps, shared by `linear` (Katharopoulos et al.) and `performer`
// (Choromanski et al.): out_i = phi(q_i)^T S / den_i with S = sum_j phi(k_j) v_j^T, causal with
// chunked prefix sums. Features exist only a block of rows at a time, in cache: a run keeps the
// output and the row denominators, O(n) memory; the implied n x m matrix is never built, its
// tiles are recomputed from Q, K and the denominators (weights/feature_weights).

#include "attention/variants/variant.h"

#include <string>
#include <vector>

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

/// A variant's feature map phi: `features()` non-negative values per row of Q or K.
/// Called from several threads at once, each on its own head.
class FeatureMap {
public:
    virtual ~FeatureMap() = default;
    virtual std::int64_t features() const = 0;
    /// Called once per head before any features of the head; keys: [m, d] of the head.
    virtual void prepareHead(std::int64_t /*head*/, const float* /*keys*/, std::int64_t /*m*/) {}
    /// phi of `rows` rows of d values each (queries or keys of `head`) into out [rows, features()].
    virtual void queryFeatures(std::int64_t head, const float* rows, std::int64_t count, float* out) const = 0;
    virtual void keyFeatures(std::int64_t head, const float* rows, std::int64_t count, float* out) const = 0;

    // Maps whose key features are ratio · (exp(p(k) − diag(k) − M) + eps) with one shift M per
    // head, the largest projection p over all the head's keys (the Performer's softmax kernel).
    // prepareHead finds M with a pass over the keys before any feature; a non-causal run instead
    // makes each key's features once, against the largest projection so far, and scales what it
    // has summed by exp(old − new) when that grows: one projection of the keys instead of two.
    virtual bool hasHeadKeyShift() const { return false; }
    /// Key features without the eps term, ratio · exp(p − diag − shift), after raising `shift` to
    /// the block's largest projection; returns exp(old shift − new shift) (1: unchanged).
    virtual float keyFeaturesRunningShift(std::int64_t /*head*/, const float* /*rows*/, std::int64_t /*count*/,
                                          float* /*out*/, float& /*shift*/) const {
        return 1.0f;
    }
    /// ratio · eps: what every key feature adds beside its exponential.
    virtual float keyFeatureConstant() const { return 0.0f; }
    /// The head's shift once every key was seen (what prepareHead would have found).
    virtual void setHeadKeyShift(std::int64_t /*head*/, float /*shift*/) {}
};

/// Fills result.output, result.stats["den"] (the denominators of the implied weights
/// A = phi(Q) phi(K)^T / den, so that output == A v), rowStatus for rows whose denominator is 0,
/// and counters. Padded keys get zero features. Causal requires m == n.
void featureAttention(const Qkv& qkv, FeatureMap& map, const FeatureAttentionSpec& spec, RunContext& ctx,
                      AttentionResult& result);

/// phi(X) [H, rows, r] of every query (or key) row (padded keys' features zero), for the dense
/// diagnostics within the dense limit.
std::vector<float> allFeatures(const Qkv& qkv, FeatureMap& map, bool keys);

/// [m]: 0 for padded keys, 1 otherwise; empty when no key padding is given.
std::vector<float> keyKeepMask(const Qkv& qkv);

/// The exact softmax weights [H, n, m] (causal: j <= i + m − n), for approximation diagnostics.
std::vector<float> exactSoftmaxWeights(const Qkv& qkv, bool causal);

}  // namespace attnscope::engine
