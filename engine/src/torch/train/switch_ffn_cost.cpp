// measureSwitchFfnCost (attnscope/switch_ffn_cost.h): the trainer's Switch layer
// (torch/train/switch_ffn.h) and a dense FFN of one expert's size, timed pass by pass on the same tokens.

#include <attnscope/switch_ffn_cost.h>

#include "base/api/engine_error.h"
#include "torch/train/switch_ffn.h"

#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

namespace attnscope::engine {
namespace {

Error invalid(const std::string& what) { return Error{ErrorCode::InvalidArgument, what}; }

std::optional<Error> checkSettings(const SwitchFfnCostSettings& s, std::int64_t tokens) {
    if (tokens < 1 || tokens > SwitchFfnCostSettings::kMaxTokens)
        return invalid("tokens must be in [1, " + std::to_string(SwitchFfnCostSettings::kMaxTokens) + "], got " + std::to_string(tokens));
    if (s.experts < 1 || s.experts > 256) return invalid("experts must be in [1, 256], got " + std::to_string(s.experts));
    if (!(s.capacityFactor >= 0) || !std::isfinite(s.capacityFactor))
        return invalid("capacity factor must be a number >= 0 (0: dropless), got " + std::to_string(s.capacityFactor));
    if (s.dModel < 1 || s.dModel > 8192 || s.dFF < 1 || s.dFF > 32768)
        return invalid("d_model must be in [1, 8192] and d_ff in [1, 32768]");
    if (s.repeats < 1 || s.repeats > 100) return invalid("repeats must be in [1, 100], got " + std::to_string(s.repeats));
    return std::nullopt;
}

// The median of `repeats` timed calls after one untimed (first-touch and cache effects).
template <class Fn>
double medianSeconds(int repeats, const ProgressFn& progress, std::int64_t& done, std::int64_t total, Fn&& pass) {
    std::vector<double> seconds;
    for (int r = 0; r <= repeats; ++r) {
        if (progress && !progress(Progress{"switch ffn", done++, total})) throw CancelledError();
        const auto start = std::chrono::steady_clock::now();
        pass();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (r > 0) seconds.push_back(s);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
}

}  // namespace

Result<SwitchFfnCostPoint> measureSwitchFfnCost(const SwitchFfnCostSettings& s, std::int64_t tokens, const ProgressFn& progress) {
    if (auto bad = checkSettings(s, tokens)) return *bad;
    at::NoGradGuard noGrad;
    at::manual_seed(11);
    const std::int64_t d = s.dModel, ff = s.dFF, experts = s.experts;
    std::map<std::string, at::Tensor> params;
    params["p.mlp.router.classifier.weight"] = at::randn({experts, d}) * (1.0 / std::sqrt(double(d)));
    for (std::int64_t e = 0; e < experts; ++e) {
        const std::string base = "p.mlp.experts.expert_" + std::to_string(e) + ".";
        params[base + "intermediate.dense.weight"] = at::randn({ff, d}) * (1.0 / std::sqrt(double(d)));
        params[base + "intermediate.dense.bias"] = at::zeros({ff});
        params[base + "output.dense.weight"] = at::randn({d, ff}) * (1.0 / std::sqrt(double(ff)));
        params[base + "output.dense.bias"] = at::zeros({d});
    }
    const auto weight = [&](const std::string& name) -> const at::Tensor& { return params.at(name); };
    const auto relu = [](const at::Tensor& t) { return at::relu(t); };
    const at::Tensor x = at::randn({1, tokens, d});
    const std::string dense = "p.mlp.experts.expert_0.";  // the dense FFN: one expert's weights on every token

    SwitchFfnCostPoint point;
    point.tokens = tokens;
    std::int64_t done = 0;
    const std::int64_t total = 2 * (s.repeats + 1);
    try {
        point.denseSeconds = medianSeconds(s.repeats, progress, done, total, [&] {
            const at::Tensor inner = relu(at::linear(x, weight(dense + "intermediate.dense.weight"), weight(dense + "intermediate.dense.bias")));
            (void)at::linear(inner, weight(dense + "output.dense.weight"), weight(dense + "output.dense.bias"));
        });
        SwitchFfnOutput last;
        point.switchSeconds = medianSeconds(s.repeats, progress, done, total,
                                            [&] { last = switchFeedForward(x, weight, "p.", experts, s.capacityFactor, relu); });
        const std::int64_t kept = last.kept.sum().item<std::int64_t>();
        point.dropped = tokens - kept;
        point.capacity = switchCapacity(tokens, experts, s.capacityFactor);
        constexpr std::uint64_t kFloat = sizeof(float);
        const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
        const std::uint64_t ffnWeights = u(2 * d * ff + ff + d);
        point.denseWeightBytes = kFloat * ffnWeights;
        point.switchWeightBytes = kFloat * (u(experts) * ffnWeights + u(experts * d));
        point.denseActivationBytes = kFloat * u(tokens * ff + tokens * d);
        point.switchActivationBytes = kFloat * (u(2 * tokens * experts) + u(kept) * u(d + ff + d) + u(tokens * d));
    } catch (const CancelledError&) {
        return Error{ErrorCode::Cancelled, "cancelled"};
    }
    return point;
}

}  // namespace attnscope::engine
