// The GPT-OSS decoder (Hugging Face GptOssModel): per layer x + o(attention(rms(x))) and
// x + experts(rms(x)), the last hidden state after the final norm. The attention: q, k, v with
// biases, YaRN rotary positions, scores q·k/√d, the causal mask (the window on sliding layers), and
// the head's sink logit beside the keys in the softmax, whose share is dropped: a row's weights sum
// to less than 1. The experts: router logits x·Wᵀ + b, the top k soft-maxed into gates, each chosen
// expert's clamped SwiGLU with biases. Weights in float32 one layer at a time, experts one at a time
// (MXFP4 dequantized as they are read).

#include "torch/model/family_forward.h"

#include "torch/tensors/to_plain.h"
#include "torch/forwards/decoder_blocks.h"
#include "io/families/llama/decoder.h"
#include "torch/model/rotary_positions.h"

#include <cmath>
#include <limits>

namespace attnscope::engine::families::gpt_oss {
namespace {

constexpr int kGateUpSlot = 0, kDownSlot = 1;

at::Tensor biasedLinear(TransformerModel& model, const at::Tensor& in, const std::string& name) { return layerLinear(model, in, name, true); }

// One layer's attention on the normed input `a` [n, hidden]: the context [n, heads · head_dim];
// captures the rotated Q, the K and V each query head reads, the weights when asked, and the sinks.
at::Tensor selfAttention(TransformerModel& model, const at::Tensor& a, std::int64_t l, const at::Tensor& frequencies,
                         const at::Tensor& hidden, bool keepAttention, ModelCapture& capture) {
    const ModelConfig& c = model.config();
    const std::string p = decoderLayerPrefix(l) + "self_attn.";
    const std::int64_t n = a.size(0), dh = c.headSize, groups = c.numHeads / c.kvHeads;
    auto split = [&](const at::Tensor& t, std::int64_t count) { return t.reshape({n, count, dh}).transpose(0, 1).contiguous(); };
    const double ropeScale = ropeAttentionFactor(c.llama.rope);
    const at::Tensor q = applyRotary(split(biasedLinear(model, a, p + "q_proj"), c.numHeads), frequencies, ropeScale);
    const at::Tensor k =
        applyRotary(split(biasedLinear(model, a, p + "k_proj"), c.kvHeads), frequencies, ropeScale).repeat_interleave(groups, 0);
    const at::Tensor v = split(biasedLinear(model, a, p + "v_proj"), c.kvHeads).repeat_interleave(groups, 0);
    at::Tensor scores = at::bmm(q, k.transpose(1, 2)).mul_(1.0 / std::sqrt(static_cast<double>(dh)));
    scores.masked_fill_(hidden, -std::numeric_limits<float>::infinity());
    // the sink: one more logit per row, soft-maxed with the keys, then dropped
    const at::Tensor sinks = model.weight(p + "sinks");
    const at::Tensor combined = at::cat({scores, sinks.view({-1, 1, 1}).expand({c.numHeads, n, 1})}, -1);
    const at::Tensor probs = at::softmax(combined, -1).narrow(-1, 0, n).contiguous();
    capture.q.push_back(q);
    capture.k.push_back(k.contiguous());
    capture.v.push_back(v.contiguous());
    capture.variantInputs.push_back({{"sinks", toPlain(sinks.contiguous())}});
    if (keepAttention) capture.attention.push_back(probs);
    return at::bmm(probs, v).transpose(0, 1).reshape({n, c.numHeads * dh});
}

// Expert e on rows x [r, hidden]: (clamp(up, ±L) + 1) · g · σ(α g), g = min(gate, L), then down,
// gate and up interleaved in gate_up's outputs (even, odd), biases on both products.
at::Tensor expert(TransformerModel& model, const at::Tensor& x, const std::string& p, std::int64_t e) {
    const ModelConfig& c = model.config();
    const GptOssSettings& g = c.gptOss;
    const std::string base = p + "mlp.experts.";
    // Linear's layout [out, in] from MXFP4, the BF16 parameter's [in, out] otherwise
    const at::Tensor gateUpBias = model.weight(base + "gate_up_proj_bias")[e], downBias = model.weight(base + "down_proj_bias")[e];
    const at::Tensor gateUp = g.mxfp4 ? at::linear(x, model.mxfp4Slice(base + "gate_up_proj", e, kGateUpSlot), gateUpBias)
                                      : at::addmm(gateUpBias, x, model.expertSlice(base + "gate_up_proj", e, kGateUpSlot));
    const at::Tensor gate = gateUp.slice(1, 0, gateUp.size(1), 2).clamp_max(g.swigluLimit);
    const at::Tensor up = gateUp.slice(1, 1, gateUp.size(1), 2).clamp(-g.swigluLimit, g.swigluLimit);
    const at::Tensor glu = (up + 1) * (gate * at::sigmoid(gate * g.swigluAlpha));
    return g.mxfp4 ? at::linear(glu, model.mxfp4Slice(base + "down_proj", e, kDownSlot), downBias)
                   : at::addmm(downBias, glu, model.expertSlice(base + "down_proj", e, kDownSlot));
}

at::Tensor experts(TransformerModel& model, const at::Tensor& x, const std::string& p, ModelCapture& capture) {
    const ModelConfig& c = model.config();
    const at::Tensor logits = biasedLinear(model, x, p + "mlp.router").contiguous();
    capture.routerLogits.push_back(logits);
    // top k of the logits soft-maxed = the softmax over all renormalised over the k chosen
    const Routing r = routeOrThrow(logits, switchRouterOptions(c.moe), p + "mlp.router");
    return mixRoutedExperts(x, r, [&](const at::Tensor& rows, std::int64_t e) { return expert(model, rows, p, e); });
}

ModelCapture gptOssForward(TransformerModel& model, const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    const double eps = c.layerNormEps;
    const std::int64_t n = ids.size(0);
    ModelCapture capture;
    at::Tensor x = model.embeddingRows("embed_tokens.weight", ids);
    capture.hidden.push_back(x);
    const at::Tensor frequencies = ropeInverseFrequencies(c.llama.rope, c.headSize, n, c.maxPositions);
    const at::Tensor query = at::arange(n, at::kLong).unsqueeze(1), key = at::arange(n, at::kLong).unsqueeze(0);
    const at::Tensor future = key.gt(query);
    const at::Tensor outsideWindow = c.llama.slidingWindow > 0 ? future.logical_or(query - key >= c.llama.slidingWindow) : future;
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string p = decoderLayerPrefix(l);
        const at::Tensor a = rmsNorm(x, model.weight(p + "input_layernorm.weight"), eps);
        const at::Tensor context = selfAttention(model, a, l, frequencies, c.llama.slides(l) ? outsideWindow : future, keepAttention, capture);
        x = x + biasedLinear(model, context, p + "self_attn.o_proj");
        x = x + experts(model, rmsNorm(x, model.weight(p + "post_attention_layernorm.weight"), eps), p, capture);
        capture.hidden.push_back(l + 1 == c.numLayers ? rmsNorm(x, model.weight("norm.weight"), eps) : x);
        model.releaseWeights(p);  // one layer in float32 at a time
    }
    return capture;
}

}  // namespace

ModelForwardFn forward() { return &gptOssForward; }

}  // namespace attnscope::engine::families::gpt_oss
