// The decoder of a Llama-family checkpoint (Hugging Face LlamaModel, MistralModel, Qwen2Model, Phi3Model,
// Qwen3Model, MixtralModel, Qwen2MoeModel, OlmoeModel): per layer an RMS norm, grouped-query causal
// attention over rotary positions (Qwen3: q and k RMS-normed per head first; OLMoE: over the whole
// projection, then clamped; Mistral and Qwen2: within a sliding window on the layers that slide),
// the residual, an RMS norm, the SwiGLU MLP down(silu(gate(x)) · up(x)) — on sparse layers its
// top-k experts of that form, Qwen2-MoE's gated shared expert besides — the residual; the last
// hidden state after the final norm. Weights are read in float32 one layer at a time.

#include "torch/model/family_forward.h"

#include "torch/forwards/decoder_blocks.h"
#include "io/families/llama/decoder.h"
#include "torch/model/rotary_positions.h"
#include "base/runtime/run_context.h"
#include "torch/tensors/to_plain.h"

#include <cmath>
#include <tuple>

namespace attnscope::engine::families::llama {
namespace {

at::Tensor swiglu(const at::Tensor& x, const at::Tensor& gate, const at::Tensor& up, const at::Tensor& down) {
    return at::linear(at::silu(at::linear(x, gate)) * at::linear(x, up), down);
}

at::Tensor expertFeedForward(TransformerModel& model, const at::Tensor& x, const std::string& prefix, ModelCapture& capture);

// q, k, v [n, heads · head_dim] from the normed input: three projections, or Phi-3's one qkv_proj
// whose rows are q's, then k's, then v's.
std::tuple<at::Tensor, at::Tensor, at::Tensor> projectQkv(TransformerModel& model, const at::Tensor& a, const std::string& p) {
    const ModelConfig& c = model.config();
    const bool bias = c.llama.qkvBias;
    if (!c.llama.fusedProjections)
        return {layerLinear(model, a, p + "self_attn.q_proj", bias), layerLinear(model, a, p + "self_attn.k_proj", bias),
                layerLinear(model, a, p + "self_attn.v_proj", bias)};
    const std::int64_t q = c.numHeads * c.headSize, kv = c.kvHeads * c.headSize;
    const at::Tensor qkv = layerLinear(model, a, p + "self_attn.qkv_proj", bias);
    return {qkv.narrow(1, 0, q), qkv.narrow(1, q, kv), qkv.narrow(1, q + kv, kv)};
}

// down(silu(gate m) · up m); Phi-3's gate_up_proj holds gate's rows, then up's.
at::Tensor denseFeedForward(TransformerModel& model, const at::Tensor& m, const std::string& p) {
    const ModelConfig& c = model.config();
    const bool bias = c.llama.mlpBias;
    if (!c.llama.fusedProjections)
        return layerLinear(model, at::silu(layerLinear(model, m, p + "mlp.gate_proj", bias)) * layerLinear(model, m, p + "mlp.up_proj", bias),
                           p + "mlp.down_proj", bias);
    const at::Tensor gateUp = layerLinear(model, m, p + "mlp.gate_up_proj", bias);
    const std::int64_t inner = c.intermediateSize;
    return layerLinear(model, at::silu(gateUp.narrow(1, 0, inner)) * gateUp.narrow(1, inner, inner), p + "mlp.down_proj", bias);
}

ModelCapture decoderForward(TransformerModel& model, const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    const LlamaSettings& s = c.llama;
    auto weight = [&](const std::string& name) -> const at::Tensor& { return model.weight(name); };
    const std::int64_t n = ids.size(0), heads = c.numHeads, dh = c.headSize, kvHeads = c.kvHeads, groups = heads / kvHeads;
    const double eps = c.layerNormEps;
    ModelCapture capture;
    at::Tensor x = model.embeddingRows("embed_tokens.weight", ids);
    capture.hidden.push_back(x);
    const at::Tensor frequencies = ropeInverseFrequencies(s.rope, dh, n, c.maxPositions);
    const double ropeScale = ropeAttentionFactor(s.rope);
    // query i sees keys up to i; on a sliding layer only i - W + 1 … i
    const at::Tensor query = at::arange(n, at::kLong).unsqueeze(1), key = at::arange(n, at::kLong).unsqueeze(0);
    const at::Tensor future = key.gt(query);
    const at::Tensor outsideWindow = s.slidingWindow > 0 ? future.logical_or(query - key >= s.slidingWindow) : future;
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string p = decoderLayerPrefix(l);
        auto split = [&](const at::Tensor& t, std::int64_t count) { return t.reshape({n, count, dh}).transpose(0, 1).contiguous(); };
        const at::Tensor a = rmsNorm(x, weight(p + "input_layernorm.weight"), eps);
        auto [qFlat, kFlat, vFlat] = projectQkv(model, a, p);
        if (s.qkNorm == QkNorm::Whole) {  // OLMoE: over all heads at once, then the clip
            qFlat = rmsNorm(qFlat, weight(p + "self_attn.q_norm.weight"), eps);
            kFlat = rmsNorm(kFlat, weight(p + "self_attn.k_norm.weight"), eps);
        }
        if (s.clipQkv > 0) {
            qFlat = qFlat.clamp(-s.clipQkv, s.clipQkv);
            kFlat = kFlat.clamp(-s.clipQkv, s.clipQkv);
            vFlat = vFlat.clamp(-s.clipQkv, s.clipQkv);
        }
        at::Tensor qHeads = split(qFlat, heads), kHeads = split(kFlat, kvHeads);
        if (s.qkNorm == QkNorm::PerHead) {  // Qwen3: every head on its own
            qHeads = rmsNorm(qHeads, weight(p + "self_attn.q_norm.weight"), eps);
            kHeads = rmsNorm(kHeads, weight(p + "self_attn.k_norm.weight"), eps);
        }
        const at::Tensor q = applyRotary(qHeads, frequencies, ropeScale);
        // each key/value head serves `groups` consecutive query heads (HF's repeat_kv)
        const at::Tensor k = applyRotary(kHeads, frequencies, ropeScale).repeat_interleave(groups, 0);
        const at::Tensor v = split(vFlat, kvHeads).repeat_interleave(groups, 0);
        at::Tensor scores = at::bmm(q, k.transpose(1, 2)).mul_(1.0 / std::sqrt(static_cast<double>(dh)));
        scores.masked_fill_(s.slides(l) ? outsideWindow : future, -std::numeric_limits<float>::infinity());
        const at::Tensor probs = at::softmax(scores, -1);
        const at::Tensor context = at::bmm(probs, v).transpose(0, 1).reshape({n, heads * dh});
        capture.q.push_back(q);
        capture.k.push_back(k.contiguous());
        capture.v.push_back(v.contiguous());
        if (keepAttention) capture.attention.push_back(probs);
        x = x + layerLinear(model, context, p + "self_attn.o_proj", s.outputBias);
        const at::Tensor m = rmsNorm(x, weight(p + "post_attention_layernorm.weight"), eps);
        // (router logits by layer: a dense layer between expert layers gets an empty entry)
        if (c.moe.active() && !c.switchLayer(l)) capture.routerLogits.emplace_back();
        x = x + (c.switchLayer(l) ? expertFeedForward(model, m, p, capture) : denseFeedForward(model, m, p));
        capture.hidden.push_back(l + 1 == c.numLayers ? rmsNorm(x, weight("norm.weight"), eps) : x);
        model.releaseWeights(p);  // one layer in float32 at a time: a 7B model never is whole
    }
    return capture;
}

at::Tensor expertFeedForward(TransformerModel& model, const at::Tensor& x, const std::string& p, ModelCapture& capture) {
    // x [n, h] -> logits [n, E] -> k experts and their gates per token -> Σ gate · down(silu(gate x) · up x)
    const ModelConfig& c = model.config();
    auto weight = [&](const std::string& name) -> const at::Tensor& { return model.weight(name); };
    const std::string router = decoderRouterWeight(c, p);
    const at::Tensor logits = at::linear(x, weight(router)).contiguous();
    capture.routerLogits.push_back(logits);
    const Routing r = routeOrThrow(logits, switchRouterOptions(c.moe), router);
    at::Tensor out = mixRoutedExperts(x, r, [&](const at::Tensor& rows, std::int64_t e) {
        const DecoderExpertNames w = decoderExpertNames(c, p, e);
        return swiglu(rows, weight(w.gate), weight(w.up), weight(w.down));
    });
    if (c.llama.sharedExpertInner > 0) {  // Qwen2-MoE: every token, gated by sigmoid(x · w)
        const std::string shared = p + "mlp.shared_expert.";
        const at::Tensor y = swiglu(x, weight(shared + "gate_proj.weight"), weight(shared + "up_proj.weight"),
                                    weight(shared + "down_proj.weight"));
        out = out + at::sigmoid(at::linear(x, weight(p + "mlp.shared_expert_gate.weight"))) * y;
    }
    return out;
}

}  // namespace

ModelForwardFn forward() { return &decoderForward; }

}  // namespace attnscope::engine::families::llama
