// The decoder of a Llama-family checkpoint (Hugging Face LlamaModel / MistralModel): per layer an
// RMS norm, grouped-query causal attention over rotary positions (Mistral: within its sliding
// window), the residual, an RMS norm, the SwiGLU MLP down(silu(gate(x)) · up(x)) — Mixtral: its
// top-k experts of that form — the residual; the last hidden state after the final norm.

#include "model/transformer_model.h"

#include "checkpoint/llama_checkpoint.h"
#include "model/rotary_positions.h"
#include "core/run_context.h"
#include "core/to_plain.h"

#include <cmath>

namespace attnscope::engine {
namespace {

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
    return x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * weight;
}

}  // namespace

ModelCapture TransformerModel::forwardLlama(const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = config();
    const LlamaSettings& s = c.llama;
    const std::int64_t n = ids.size(0), heads = c.numHeads, dh = s.headDim, groups = heads / s.kvHeads;
    const double eps = c.layerNormEps;
    ModelCapture capture;
    at::Tensor x = at::embedding(weight("embed_tokens.weight"), ids);
    capture.hidden.push_back(x);
    const at::Tensor frequencies = ropeInverseFrequencies(s.rope, dh, n, c.maxPositions);
    // query i sees keys i - W + 1 … i (all earlier ones without a window)
    const at::Tensor query = at::arange(n, at::kLong).unsqueeze(1), key = at::arange(n, at::kLong).unsqueeze(0);
    at::Tensor hidden = key.gt(query);
    if (s.slidingWindow > 0) hidden = hidden.logical_or(query - key >= s.slidingWindow);
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string p = llamaLayerPrefix(l);
        auto linear = [&](const at::Tensor& in, const std::string& base, bool bias) {
            return bias ? at::linear(in, weight(p + base + ".weight"), weight(p + base + ".bias"))
                        : at::linear(in, weight(p + base + ".weight"));
        };
        auto split = [&](const at::Tensor& t, std::int64_t count) { return t.reshape({n, count, dh}).transpose(0, 1).contiguous(); };
        const at::Tensor a = rmsNorm(x, weight(p + "input_layernorm.weight"), eps);
        const at::Tensor q = applyRotary(split(linear(a, "self_attn.q_proj", s.attentionBias), heads), frequencies);
        // each key/value head serves `groups` consecutive query heads (HF's repeat_kv)
        const at::Tensor k = applyRotary(split(linear(a, "self_attn.k_proj", s.attentionBias), s.kvHeads), frequencies)
                                 .repeat_interleave(groups, 0);
        const at::Tensor v = split(linear(a, "self_attn.v_proj", s.attentionBias), s.kvHeads).repeat_interleave(groups, 0);
        at::Tensor scores = at::bmm(q, k.transpose(1, 2)).mul_(1.0 / std::sqrt(static_cast<double>(dh)));
        scores.masked_fill_(hidden, -std::numeric_limits<float>::infinity());
        const at::Tensor probs = at::softmax(scores, -1);
        const at::Tensor context = at::bmm(probs, v).transpose(0, 1).reshape({n, heads * dh});
        capture.q.push_back(q);
        capture.k.push_back(k.contiguous());
        capture.v.push_back(v.contiguous());
        if (keepAttention) capture.attention.push_back(probs);
        x = x + linear(context, "self_attn.o_proj", s.attentionBias);
        const at::Tensor m = rmsNorm(x, weight(p + "post_attention_layernorm.weight"), eps);
        x = x + (c.moe.active() ? mixtralFeedForward(m, p, capture)
                                : linear(at::silu(linear(m, "mlp.gate_proj", s.mlpBias)) * linear(m, "mlp.up_proj", s.mlpBias),
                                         "mlp.down_proj", s.mlpBias));
        capture.hidden.push_back(l + 1 == c.numLayers ? rmsNorm(x, weight("norm.weight"), eps) : x);
    }
    return capture;
}

at::Tensor TransformerModel::mixtralFeedForward(const at::Tensor& x, const std::string& p, ModelCapture& capture) {
    // x [n, h] -> logits [n, E] -> k experts and renormalised gates per token -> Σ gate · w2(silu(w1 x) · w3 x)
    const at::Tensor logits = at::linear(x, weight(p + "block_sparse_moe.gate.weight")).contiguous();
    capture.routerLogits.push_back(logits);
    auto routing = routeTokens(toPlain(logits), switchRouterOptions(config().moe));
    if (!routing) throw EngineError(routing.error().code, p + "block_sparse_moe.gate: " + routing.error().message);
    const Routing& r = routing.value();
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
        const std::string w = mixtralExpertPrefix(p, e);
        const at::Tensor index = at::tensor(at::ArrayRef<std::int64_t>(rows), at::kLong);
        const at::Tensor in = x.index_select(0, index);
        const at::Tensor y = at::linear(at::silu(at::linear(in, weight(w + "w1.weight"))) * at::linear(in, weight(w + "w3.weight")),
                                        weight(w + "w2.weight"));
        out.index_add_(0, index, y * at::tensor(at::ArrayRef<float>(gates), at::kFloat).unsqueeze(1));
    }
    return out;
}

}  // namespace attnscope::engine
