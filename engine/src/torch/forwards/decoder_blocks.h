#pragma once
// Building blocks the decoder families' forwards share (LibTorch; included by <id>_forward.cpp
// files only): the RMS norm, a layer's linear map with or without its bias, and the routed experts'
// mix — each token through the experts its router chose, weighted by their gates.

#include "torch/tensors/to_plain.h"
#include "torch/model/transformer_model.h"
#include "base/api/engine_error.h"

#include <attnscope/moe_router.h>

#include <string>
#include <vector>

namespace attnscope::engine {

/// x / √(mean(x²) + eps) · weight, over the last dimension.
inline at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
    return x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * weight;
}

/// in · W(name.weight)ᵀ (+ name.bias when `bias`).
inline at::Tensor layerLinear(TransformerModel& model, const at::Tensor& in, const std::string& name, bool bias) {
    return bias ? at::linear(in, model.weight(name + ".weight"), model.weight(name + ".bias")) : at::linear(in, model.weight(name + ".weight"));
}

/// Routes the tokens' router logits [n, E] with `options`; a refusal names `router`.
inline Routing routeOrThrow(const at::Tensor& logits, const RouterOptions& options, const std::string& router) {
    auto routing = routeTokens(toPlain(logits), options);
    if (!routing) throw EngineError(routing.error().code, router + ": " + routing.error().message);
    return std::move(routing.value());
}

/// Σ over each token's kept choices of gate · expert(e)(token): `expert(rows, e)` maps the rows
/// [r, hidden] that chose expert e to its output [r, hidden]; an expert no token chose is not run.
template <class ExpertFn>
at::Tensor mixRoutedExperts(const at::Tensor& x, const Routing& r, ExpertFn&& expert) {
    at::Tensor out = at::zeros_like(x);
    for (std::int64_t e = 0; e < r.experts; ++e) {
        std::vector<std::int64_t> rows;
        std::vector<float> gates;
        for (std::size_t i = 0; i < r.expert.size(); ++i)
            if (r.expert[i] == e && r.kept[i]) {
                rows.push_back(static_cast<std::int64_t>(i) / r.k);
                gates.push_back(r.gate[i]);
            }
        if (rows.empty()) continue;
        const at::Tensor index = at::tensor(at::ArrayRef<std::int64_t>(rows), at::kLong);
        const at::Tensor y = expert(x.index_select(0, index), e);
        out.index_add_(0, index, y * at::tensor(at::ArrayRef<float>(gates), at::kFloat).unsqueeze(1));
    }
    return out;
}

}  // namespace attnscope::engine
