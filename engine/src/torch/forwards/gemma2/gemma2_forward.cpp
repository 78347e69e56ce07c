// The Gemma decoder (Hugging Face Gemma2Model, Gemma3TextModel): the embeddings times √hidden_size,
// then per layer x + post_attention_norm(attention(input_norm(x))) and x + post_feedforward_norm(
// GeGLU(pre_feedforward_norm(x))), the last hidden state after the final norm. Every norm is RMS
// scaling by (1 + weight). The attention: q, k, v projections (Gemma 3: q and k RMS-normed per head),
// rotary positions (Gemma 3: the local base on sliding layers), scores q·k · query_pre_attn_scalar^-½,
// soft-capped c·tanh(s/c) when attn_logit_softcapping is set, then the causal mask (within the
// window on sliding layers) and the softmax. Weights in float32 one layer at a time.

#include "torch/model/family_forward.h"

#include "torch/forwards/decoder_blocks.h"
#include "io/families/gemma2/gemma_decoder.h"
#include "io/families/llama/decoder.h"
#include "torch/model/rotary_positions.h"

#include <cmath>
#include <limits>

namespace attnscope::engine::families::gemma2 {
namespace {

at::Tensor gemmaNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
    return x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * (1.0 + weight);
}

// Keys a query may not see: the future, and on a sliding layer those W or more positions back.
struct LayerMasks {
    at::Tensor future, outsideWindow;
};

LayerMasks layerMasks(std::int64_t n, std::int64_t window) {
    const at::Tensor query = at::arange(n, at::kLong).unsqueeze(1), key = at::arange(n, at::kLong).unsqueeze(0);
    LayerMasks m;
    m.future = key.gt(query);
    m.outsideWindow = window > 0 ? m.future.logical_or(query - key >= window) : m.future;
    return m;
}

// One layer's attention on the normed input `a` [n, hidden]: the context [n, heads · head_dim];
// captures the rotated Q, the K and V each query head reads, and the weights when asked.
at::Tensor selfAttention(TransformerModel& model, const at::Tensor& a, std::int64_t l, const LayerMasks& masks, bool keepAttention,
                         ModelCapture& capture) {
    const ModelConfig& c = model.config();
    const std::string p = decoderLayerPrefix(l);
    const std::int64_t n = a.size(0), dh = c.headSize, groups = c.numHeads / c.kvHeads;
    const bool bias = c.llama.qkvBias;
    auto split = [&](const at::Tensor& t, std::int64_t count) { return t.reshape({n, count, dh}).transpose(0, 1).contiguous(); };
    at::Tensor qHeads = split(layerLinear(model, a, p + "self_attn.q_proj", bias), c.numHeads);
    at::Tensor kHeads = split(layerLinear(model, a, p + "self_attn.k_proj", bias), c.kvHeads);
    const at::Tensor vHeads = split(layerLinear(model, a, p + "self_attn.v_proj", bias), c.kvHeads);
    if (c.llama.qkNorm == QkNorm::PerHead) {  // Gemma 3
        qHeads = gemmaNorm(qHeads, model.weight(p + "self_attn.q_norm.weight"), c.layerNormEps);
        kHeads = gemmaNorm(kHeads, model.weight(p + "self_attn.k_norm.weight"), c.layerNormEps);
    }
    const RopeSettings& rope = *gemmaRope(c, l);
    const at::Tensor frequencies = ropeInverseFrequencies(rope, dh, n, c.maxPositions);
    const double ropeScale = ropeAttentionFactor(rope);
    const at::Tensor q = applyRotary(qHeads, frequencies, ropeScale);
    const at::Tensor k = applyRotary(kHeads, frequencies, ropeScale).repeat_interleave(groups, 0);
    const at::Tensor v = vHeads.repeat_interleave(groups, 0);
    at::Tensor scores = at::bmm(q, k.transpose(1, 2)).mul_(1.0 / std::sqrt(c.gemma.queryPreAttnScalar));
    if (c.gemma.attnSoftcap > 0) scores = at::tanh(scores / c.gemma.attnSoftcap) * c.gemma.attnSoftcap;
    scores.masked_fill_(c.llama.slides(l) ? masks.outsideWindow : masks.future, -std::numeric_limits<float>::infinity());
    const at::Tensor probs = at::softmax(scores, -1);
    capture.q.push_back(q);
    capture.k.push_back(k.contiguous());
    capture.v.push_back(v.contiguous());
    if (keepAttention) capture.attention.push_back(probs);
    return at::bmm(probs, v).transpose(0, 1).reshape({n, c.numHeads * dh});
}

// down(gelu(gate m) · up m)
at::Tensor geglu(TransformerModel& model, const at::Tensor& m, const std::string& p) {
    const bool bias = model.config().llama.mlpBias;
    const at::Tensor gate = model.activation(layerLinear(model, m, p + "mlp.gate_proj", bias));
    return layerLinear(model, gate * layerLinear(model, m, p + "mlp.up_proj", bias), p + "mlp.down_proj", bias);
}

ModelCapture gemmaForward(TransformerModel& model, const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    const double eps = c.layerNormEps;
    auto weight = [&](const std::string& name) -> const at::Tensor& { return model.weight(name); };
    ModelCapture capture;
    at::Tensor x = model.embeddingRows("embed_tokens.weight", ids) * std::sqrt(static_cast<double>(c.hiddenSize));
    capture.hidden.push_back(x);
    const LayerMasks masks = layerMasks(ids.size(0), c.llama.slidingWindow);
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string p = decoderLayerPrefix(l);
        const at::Tensor context = selfAttention(model, gemmaNorm(x, weight(p + "input_layernorm.weight"), eps), l, masks, keepAttention, capture);
        const at::Tensor attended = layerLinear(model, context, p + "self_attn.o_proj", c.llama.outputBias);
        x = x + gemmaNorm(attended, weight(p + "post_attention_layernorm.weight"), eps);
        const at::Tensor fed = geglu(model, gemmaNorm(x, weight(p + "pre_feedforward_layernorm.weight"), eps), p);
        x = x + gemmaNorm(fed, weight(p + "post_feedforward_layernorm.weight"), eps);
        capture.hidden.push_back(l + 1 == c.numLayers ? gemmaNorm(x, weight("norm.weight"), eps) : x);
        model.releaseWeights(p);  // one layer in float32 at a time
    }
    return capture;
}

}  // namespace

ModelForwardFn forward() { return &gemmaForward; }

}  // namespace attnscope::engine::families::gemma2
