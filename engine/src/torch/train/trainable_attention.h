#pragma once
// Differentiable forms of the variants the trainer accepts. Each reproduces the variant's own
// output (Variant::run) on the same Q, K, V: pattern variants through their pattern (a key listed
// c times adds log c to its score, so BigBird's duplicates count as in the kernels); Linformer,
// Linear and Performer through their formulas with the variant's own random draws.

#include "base/runtime/buffer_pool.h"
#include "attention/variants/variant.h"

#include <ATen/ATen.h>

#include <string>

namespace attnscope::engine {

class TrainableAttention {
public:
    /// Prepares the attention for `heads` heads of `headDim` over `n` tokens: runs the variant
    /// once to obtain its pattern or random draws. Throws EngineError when the variant is not
    /// trainable or refuses these sizes.
    TrainableAttention(const Variant& variant, const ParamValues& params, std::int64_t heads, std::int64_t n,
                       std::int64_t headDim, std::uint64_t seed, BufferPool& pool);

    /// q, k, v: [batch, heads, n, headDim] -> context [batch, heads, n, headDim]; differentiable.
    at::Tensor operator()(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) const;

private:
    enum class Kind { Pattern, Linformer, Linear, Performer };
    Kind m_kind = Kind::Pattern;
    double m_scale = 1.0;
    at::Tensor m_bias;             ///< Pattern: [heads, n, keys], log(count) or -inf
    bool m_relay = false;          ///< Star: the relay (mean key and value) is key n
    at::Tensor m_e, m_f;           ///< Linformer: [k, n] or [heads, k, n]
    at::Tensor m_projection;       ///< Performer: [heads, m, d]
    bool m_causal = false;
    double m_eps = 0.0;
    bool m_epsPerFeatureSum = false;  ///< eps added to every key sum (scales with sum phi(q))
    bool m_relu = false;
    double m_featureEps = 0.0;
};

}  // namespace attnscope::engine
