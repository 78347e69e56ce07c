// The DeepSeek decoder (Hugging Face DeepseekV2Model, DeepseekV3Model): per layer
// x + o(latent attention(rms(x))) and x + MLP(rms(x)), the last hidden state after the final norm.
// Latent attention: q = q_b(rms(q_a(x))) (or q_proj(x)) split per head into a non-rotary and a
// rotary part; the latent c = rms(kv_a(x)[:kv_lora_rank]) gives each head's non-rotary key and its
// value through kv_b, and kv_a's last qk_rope_head_dim features are one rotary key every head
// shares; scores (q_nope·k_nope + q_rope·k_rope) · scale, causal, softmax. The MLP: dense in the
// first layers, then routed experts (DeepSeek's router) plus the shared experts. The Q and K kept
// are [q_nope | q_rope] and [k_nope | k_rope] per head; V is kept padded with zeros to that width
// (the engine's Q, K and V share one width; the weights do not depend on it). Weights in float32
// one layer at a time.

#include "torch/model/family_forward.h"

#include "torch/forwards/decoder_blocks.h"
#include "io/families/llama/decoder.h"
#include "torch/model/rotary_positions.h"

#include <cmath>
#include <limits>

namespace attnscope::engine::families::deepseek_v2 {
namespace {

constexpr double kLatentNormEps = 1e-6;  // q_a_layernorm's and kv_a_layernorm's (their class default)

at::Tensor swiglu(TransformerModel& model, const at::Tensor& x, const std::string& p) {
    return at::linear(at::silu(at::linear(x, model.weight(p + "gate_proj.weight"))) * at::linear(x, model.weight(p + "up_proj.weight")),
                      model.weight(p + "down_proj.weight"));
}

at::Tensor rotate(const ModelConfig& c, const at::Tensor& x, const at::Tensor& frequencies) {
    const double factor = ropeAttentionFactor(c.llama.rope);
    return c.deepseek.ropeInterleave ? applyPairRotary(x, frequencies, factor) : applyRotary(x, frequencies, factor);
}

// One layer's latent attention on the normed input `a` [n, hidden]: the context [n, heads · v].
at::Tensor latentAttention(TransformerModel& model, const at::Tensor& a, std::int64_t l, const at::Tensor& frequencies,
                           const at::Tensor& future, bool keepAttention, ModelCapture& capture) {
    const ModelConfig& c = model.config();
    const DeepseekSettings& d = c.deepseek;
    const std::string p = decoderLayerPrefix(l) + "self_attn.";
    const std::int64_t n = a.size(0), heads = c.numHeads, qk = c.headSize;
    const bool bias = c.llama.qkvBias;
    const at::Tensor qFlat = d.qLoraRank > 0 ? at::linear(rmsNorm(layerLinear(model, a, p + "q_a_proj", bias),
                                                                  model.weight(p + "q_a_layernorm.weight"), kLatentNormEps),
                                                          model.weight(p + "q_b_proj.weight"))
                                             : at::linear(a, model.weight(p + "q_proj.weight"));
    const at::Tensor q = qFlat.reshape({n, heads, qk}).transpose(0, 1);  // [H, n, nope + rope]
    const at::Tensor compressed = layerLinear(model, a, p + "kv_a_proj_with_mqa", bias);  // [n, latent + rope]
    const at::Tensor latent = rmsNorm(compressed.narrow(1, 0, d.kvLoraRank), model.weight(p + "kv_a_layernorm.weight"), kLatentNormEps);
    const at::Tensor kv = at::linear(latent, model.weight(p + "kv_b_proj.weight")).reshape({n, heads, d.qkNopeDim + d.vHeadDim}).transpose(0, 1);
    const at::Tensor kRope = rotate(c, compressed.narrow(1, d.kvLoraRank, d.qkRopeDim).unsqueeze(0), frequencies);  // [1, n, rope]
    const at::Tensor qAll = at::cat({q.narrow(2, 0, d.qkNopeDim), rotate(c, q.narrow(2, d.qkNopeDim, d.qkRopeDim).contiguous(), frequencies)}, -1);
    const at::Tensor kAll = at::cat({kv.narrow(2, 0, d.qkNopeDim), kRope.expand({heads, n, d.qkRopeDim})}, -1).contiguous();
    const at::Tensor v = kv.narrow(2, d.qkNopeDim, d.vHeadDim).contiguous();
    at::Tensor scores = at::bmm(qAll, kAll.transpose(1, 2)).mul_(d.scoreScale);
    scores.masked_fill_(future, -std::numeric_limits<float>::infinity());
    const at::Tensor probs = at::softmax(scores, -1);
    capture.q.push_back(qAll.contiguous());
    capture.k.push_back(kAll);
    capture.v.push_back(at::constant_pad_nd(v, {0, qk - d.vHeadDim}).contiguous());
    if (keepAttention) capture.attention.push_back(probs);
    return at::bmm(probs, v).transpose(0, 1).reshape({n, heads * d.vHeadDim});
}

at::Tensor experts(TransformerModel& model, const at::Tensor& x, const std::string& p, ModelCapture& capture) {
    const ModelConfig& c = model.config();
    const at::Tensor logits = at::linear(x, model.weight(p + "mlp.gate.weight")).contiguous();
    capture.routerLogits.push_back(logits);
    RouterOptions options = switchRouterOptions(c.moe);
    if (c.deepseek.choiceBias) {
        const at::Tensor bias = model.weight(p + "mlp.gate.e_score_correction_bias").contiguous();
        options.choiceBias.assign(bias.data_ptr<float>(), bias.data_ptr<float>() + bias.numel());
    }
    capture.routerChoiceBias.push_back(options.choiceBias);
    const Routing r = routeOrThrow(logits, options, p + "mlp.gate");
    at::Tensor out = mixRoutedExperts(
        x, r, [&](const at::Tensor& rows, std::int64_t e) { return swiglu(model, rows, p + "mlp.experts." + std::to_string(e) + "."); });
    if (c.deepseek.sharedExperts > 0) out = out + swiglu(model, x, p + "mlp.shared_experts.");
    return out;
}

ModelCapture mlaForward(TransformerModel& model, const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    const double eps = c.layerNormEps;
    const std::int64_t n = ids.size(0);
    ModelCapture capture;
    at::Tensor x = model.embeddingRows("embed_tokens.weight", ids);
    capture.hidden.push_back(x);
    const at::Tensor frequencies = ropeInverseFrequencies(c.llama.rope, c.deepseek.qkRopeDim, n, c.maxPositions);
    const at::Tensor future = at::arange(n, at::kLong).unsqueeze(0).gt(at::arange(n, at::kLong).unsqueeze(1));
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string p = decoderLayerPrefix(l);
        const at::Tensor context = latentAttention(model, rmsNorm(x, model.weight(p + "input_layernorm.weight"), eps), l, frequencies,
                                                   future, keepAttention, capture);
        x = x + layerLinear(model, context, p + "self_attn.o_proj", c.llama.outputBias);
        const at::Tensor m = rmsNorm(x, model.weight(p + "post_attention_layernorm.weight"), eps);
        if (c.moe.active() && !c.switchLayer(l)) {  // (router entries by layer: a dense layer's empty)
            capture.routerLogits.emplace_back();
            capture.routerChoiceBias.emplace_back();
        }
        x = x + (c.switchLayer(l) ? experts(model, m, p, capture) : swiglu(model, m, p + "mlp."));
        capture.hidden.push_back(l + 1 == c.numLayers ? rmsNorm(x, model.weight("norm.weight"), eps) : x);
        model.releaseWeights(p);  // one layer in float32 at a time
    }
    return capture;
}

}  // namespace

ModelForwardFn forward() { return &mlaForward; }

}  // namespace attnscope::engine::families::deepseek_v2
