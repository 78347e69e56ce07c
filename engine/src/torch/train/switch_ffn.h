#pragma once
// The Switch Transformer feed-forward layer as the trainer runs it, differentiably (Fedus et al.
// 2021; Hugging Face SwitchTransformersSparseMLP): top-1 router, each sequence of the batch one
// group whose tokens claim their expert's slots in order, a token past the capacity gets zeros
// (the residual carries it), the expert's output scaled by the router probability; and the
// balancing losses. The same rules as attnscope/moe_router.h, which the engine's inference uses.

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <string>

namespace attnscope::engine {

struct SwitchFfnOutput {
    at::Tensor out;    ///< [b, n, d]
    at::Tensor aux;    ///< scalar: E · Σ_e f_e · P_e per sequence, averaged (f: choices before the capacity)
    at::Tensor z;      ///< scalar: mean of logsumexp(logits)²
    at::Tensor kept;   ///< [b, n] bool: within the capacity
};

/// Slots per expert for `tokens` tokens of a group, as the router computes them (0: unlimited).
std::int64_t switchCapacity(std::int64_t tokens, std::int64_t experts, double capacityFactor);

/// x [b, n, d]; `weight(name)` gives the parameters under `prefix` ("encoder.layer.N."): the
/// router mlp.router.classifier.weight [E, d] and each expert's mlp.experts.expert_{e}.
/// intermediate.dense / output.dense (weight and bias); `activation` between them.
SwitchFfnOutput switchFeedForward(const at::Tensor& x, const std::function<const at::Tensor&(const std::string&)>& weight,
                                  const std::string& prefix, std::int64_t experts, double capacityFactor,
                                  const std::function<at::Tensor(const at::Tensor&)>& activation);

}  // namespace attnscope::engine
