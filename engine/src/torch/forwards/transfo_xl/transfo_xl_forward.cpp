// Transformer-XL's forward pass (Dai et al. 2019; the reference MemTransformerLM with
// RelPartialLearnableMultiHeadAttn, attn_type 0, in eval mode), as Hugging Face's TransfoXL names
// its weights. The text is read in segments of tgt_len tokens; each layer of a segment attends the
// layer inputs of the last mem_len positions before it (the memory, which the reference caches
// with _update_mems) and its own segment causally, with relative positions. What the capture
// keeps per layer is what the `transformer_xl` variant needs to give the same weights: Q of every
// position from its own segment, K and V of every position, u, v and r_δ for δ = 0 … M + L − 1.

#include "torch/model/family_forward.h"

#include "io/families/transfo_xl/transfo_xl_tensors.h"
#include "torch/tensors/to_plain.h"
#include "torch/forwards/transfo_xl/transfo_xl_forward_positions.h"

#include <cmath>
#include <limits>

namespace attnscope::engine::families::transfo_xl {
namespace {

ModelCapture segmentForward(TransformerModel& model, const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    auto weight = [&](const std::string& name) -> const at::Tensor& { return model.weight(name); };
    const TransfoXlSettings& x = c.transfoXl;
    const std::int64_t n = ids.size(0), d = c.hiddenSize, heads = c.numHeads, dh = c.headSize;
    const std::int64_t L = x.tgtLen, M = x.memLen, segments = (n + L - 1) / L;
    const double eps = c.layerNormEps, scale = 1.0 / std::sqrt(static_cast<double>(dh));
    const auto layerWeight = [&](std::int64_t l, const char* leaf) -> const at::Tensor& {
        return weight(transfoXlLayerName(l, leaf));
    };
    // u (r_w_bias) or v (r_r_bias): per layer with untie_r, else shared by every layer
    const auto bias = [&](std::int64_t l, bool content) -> const at::Tensor& {
        return x.untieR ? layerWeight(l, content ? "dec_attn.r_w_bias" : "dec_attn.r_r_bias")
                        : weight(content ? "r_w_bias" : "r_r_bias");
    };

    ModelCapture capture;
    capture.hidden.push_back(at::embedding(weight("word_emb.emb_layers.0.weight"), ids) * std::sqrt(static_cast<double>(d)));
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        capture.hidden.push_back(at::zeros({n, d}, at::kFloat));
        capture.q.push_back(at::zeros({heads, n, dh}, at::kFloat));
        capture.k.push_back(at::zeros({heads, n, dh}, at::kFloat));
        capture.v.push_back(at::zeros({heads, n, dh}, at::kFloat));
        if (keepAttention) capture.attention.push_back(at::zeros({heads, n, n}, at::kFloat));
    }

    for (std::int64_t s = 0; s < segments; ++s) {
        const std::int64_t start = s * L, qlen = std::min(L, n - start);
        const std::int64_t memStart = std::max<std::int64_t>(0, start - M), mlen = start - memStart, klen = mlen + qlen;
        const at::Tensor posEmb = segmentEncoding(klen, d, x.clampLen);
        const at::Tensor column = relativeColumns(qlen, mlen);
        const at::Tensor masked = segmentMask(qlen, mlen, M, x.sameLength);
        for (std::int64_t l = 0; l < c.numLayers; ++l) {
            checkModelProgress(progress, s * c.numLayers + l, segments * c.numLayers);
            at::Tensor cat = capture.hidden[static_cast<std::size_t>(l)].narrow(0, memStart, klen);
            at::Tensor in = x.preLnorm ? at::layer_norm(cat, {d}, layerWeight(l, "dec_attn.layer_norm.weight"),
                                                        layerWeight(l, "dec_attn.layer_norm.bias"), eps)
                                       : cat;
            auto parts = at::linear(in, layerWeight(l, "dec_attn.qkv_net.weight")).split(heads * dh, 1);
            auto perHead = [&](const at::Tensor& t) { return t.reshape({t.size(0), heads, dh}).transpose(0, 1); };
            at::Tensor q = perHead(parts[0].narrow(0, mlen, qlen)), k = perHead(parts[1]), v = perHead(parts[2]);
            at::Tensor r = perHead(at::linear(posEmb, layerWeight(l, "dec_attn.r_net.weight")));  // [H, klen, dh]
            at::Tensor ac = at::matmul(q + bias(l, true).unsqueeze(1), k.transpose(1, 2));
            at::Tensor bd = at::matmul(q + bias(l, false).unsqueeze(1), r.transpose(1, 2)).gather(2, column.expand({heads, qlen, klen}));
            at::Tensor scores = (ac + bd).mul_(scale).masked_fill_(masked, -std::numeric_limits<float>::infinity());
            at::Tensor probs = at::softmax(scores, 2);
            at::Tensor context = at::matmul(probs, v).transpose(0, 1).reshape({qlen, heads * dh});
            at::Tensor h = cat.narrow(0, mlen, qlen);
            at::Tensor attnOut = at::linear(context, layerWeight(l, "dec_attn.o_net.weight"));
            at::Tensor out = x.preLnorm ? h + attnOut
                                        : at::layer_norm(h + attnOut, {d}, layerWeight(l, "dec_attn.layer_norm.weight"),
                                                         layerWeight(l, "dec_attn.layer_norm.bias"), eps);
            const auto coreNet = [&](const at::Tensor& t) {
                at::Tensor inner = at::relu(at::linear(t, layerWeight(l, "pos_ff.CoreNet.0.weight"), layerWeight(l, "pos_ff.CoreNet.0.bias")));
                return at::linear(inner, layerWeight(l, "pos_ff.CoreNet.3.weight"), layerWeight(l, "pos_ff.CoreNet.3.bias"));
            };
            const auto ffNorm = [&](const at::Tensor& t) {
                return at::layer_norm(t, {d}, layerWeight(l, "pos_ff.layer_norm.weight"), layerWeight(l, "pos_ff.layer_norm.bias"), eps);
            };
            out = x.preLnorm ? out + coreNet(ffNorm(out)) : ffNorm(out + coreNet(out));

            const auto layer = static_cast<std::size_t>(l);
            capture.hidden[layer + 1].narrow(0, start, qlen).copy_(out);
            capture.q[layer].narrow(1, start, qlen).copy_(q);
            capture.k[layer].narrow(1, start, qlen).copy_(k.narrow(1, mlen, qlen));
            capture.v[layer].narrow(1, start, qlen).copy_(v.narrow(1, mlen, qlen));
            if (keepAttention) capture.attention[layer].narrow(1, start, qlen).narrow(2, memStart, klen).copy_(probs);
        }
    }

    // u, v and r_δ = W_r R(δ) (clamped as the model clamps them) for δ = 0 … M + L − 1, and as far
    // as the text reaches, so that the variant also runs with other segment and memory lengths
    const std::int64_t distances = std::max(M + L, n + L);
    const at::Tensor allEmb = relativeEncoding(at::arange(distances, at::kLong), d, x.clampLen);
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        std::map<std::string, PlainTensor> inputs;
        inputs["r_w_bias"] = toPlain(bias(l, true).contiguous());
        inputs["r_r_bias"] = toPlain(bias(l, false).contiguous());
        at::Tensor r = at::linear(allEmb, layerWeight(l, "dec_attn.r_net.weight")).reshape({distances, heads, dh}).transpose(0, 1);
        inputs["pos_keys"] = toPlain(r.contiguous());
        capture.variantInputs.push_back(std::move(inputs));
    }
    return capture;
}

}  // namespace

ModelForwardFn forward() { return &segmentForward; }

}  // namespace attnscope::engine::families::transfo_xl
