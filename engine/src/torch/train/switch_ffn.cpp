#include "torch/train/switch_ffn.h"

#include <attnscope/model_checkpoint.h>

#include <cmath>

namespace attnscope::engine {

std::int64_t switchCapacity(std::int64_t tokens, std::int64_t experts, double capacityFactor) {
    if (!(capacityFactor > 0)) return 0;
    // as routeTokens: ceil(k · tokens_per_group / E · capacity_factor) with k = 1 (and its guard
    // against a product that lands a rounding error above an integer)
    return static_cast<std::int64_t>(
        std::ceil(static_cast<double>(tokens) / static_cast<double>(experts) * capacityFactor - 1e-9));
}

SwitchFfnOutput switchFeedForward(const at::Tensor& x, const std::function<const at::Tensor&(const std::string&)>& weight,
                                  const std::string& p, std::int64_t experts, double capacityFactor,
                                  const std::function<at::Tensor(const at::Tensor&)>& activation) {
    // x [b, n, d] -> logits, probs [b, n, E] -> expert, gate, slot [b, n] -> out [b, n, d]
    const std::int64_t b = x.size(0), n = x.size(1), d = x.size(2);
    const at::Tensor logits = at::linear(x, weight(switchRouterWeight(p)));
    const at::Tensor probs = at::softmax(logits, -1);
    const auto [gate, expert] = probs.max(-1);
    const at::Tensor chosen = at::one_hot(expert, experts).to(at::kFloat);  // [b, n, E]
    // 1-based slot of each token in its expert's buffer, claimed in sequence order per sequence
    const at::Tensor slot = (chosen.cumsum(1) * chosen).sum(-1);
    const std::int64_t capacity = switchCapacity(n, experts, capacityFactor);
    const at::Tensor kept = capacity > 0 ? slot.le(static_cast<double>(capacity)) : at::ones({b, n}, at::kBool);

    const at::Tensor flatX = x.reshape({b * n, d});
    const at::Tensor flatExpert = expert.reshape({-1}), flatKept = kept.reshape({-1}), flatGate = gate.reshape({-1});
    at::Tensor out = at::zeros({b * n, d}, x.options());
    for (std::int64_t e = 0; e < experts; ++e) {
        const at::Tensor rows = (flatExpert.eq(e) & flatKept).nonzero().squeeze(1);
        if (rows.numel() == 0) continue;
        const std::string base = switchExpertPrefix(p, e);
        auto linear = [&](const at::Tensor& in, const std::string& name) {
            return at::linear(in, weight(base + name + ".weight"), weight(base + name + ".bias"));
        };
        const at::Tensor y = linear(activation(linear(flatX.index_select(0, rows), "intermediate.dense")), "output.dense");
        out = out.index_add(0, rows, y * flatGate.index_select(0, rows).unsqueeze(1));
    }
    SwitchFfnOutput result;
    result.out = out.reshape({b, n, d});
    // f_e: share of the sequence's tokens choosing e (before the capacity); P_e: mean probability
    const at::Tensor f = chosen.mean(1), share = probs.mean(1);  // [b, E]
    result.aux = (f * share).sum(-1).mean() * static_cast<double>(experts);
    result.z = at::logsumexp(logits, -1).pow(2).mean();
    result.kept = kept;
    return result;
}

}  // namespace attnscope::engine
