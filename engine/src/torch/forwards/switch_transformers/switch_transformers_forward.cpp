// The encoder of a Switch Transformers checkpoint (Hugging Face SwitchTransformersEncoderModel,
// the T5 block with Switch FFN layers): pre-norm RMS layer norms, unscaled q·k scores plus the
// relative position bias of block 0, ReLU FFNs, and Switch layers routed top-1 with the model's
// fixed expert_capacity.

#include "torch/model/family_forward.h"

#include "torch/tensors/to_plain.h"

#include "io/families/switch_transformers/switch_transformers_tensors.h"
#include "torch/forwards/switch_transformers/t5_forward_buckets.h"

#include <cmath>

namespace attnscope::engine::families::switch_transformers {
namespace {

/// T5's layer norm: x / sqrt(mean(x²) + eps) · weight, no mean removed and no bias.
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
    return x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * weight;
}

ModelCapture t5Forward(TransformerModel& model, const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    auto weight = [&](const std::string& name) -> const at::Tensor& { return model.weight(name); };
    const std::int64_t n = ids.size(0), heads = c.numHeads, dh = c.headSize;
    const double eps = c.layerNormEps;
    ModelCapture capture;
    at::Tensor x = at::embedding(weight(kSwitchTransformersEmbedding), ids);
    capture.hidden.push_back(x);
    // [heads, n, n]: block 0 learns it, every block adds the same.
    const at::Tensor buckets = t5RelativeBuckets(n, /*bidirectional=*/true, c.t5.relativeBuckets, c.t5.relativeMaxDistance);
    const at::Tensor& table = weight(switchTransformersSublayer(0, 0) + "SelfAttention.relative_attention_bias.weight");
    const at::Tensor bias = at::embedding(table, buckets).permute({2, 0, 1}).contiguous();
    // The same by distance, [heads, 2n - 1]: what the layers' own attention reads (model_softmax).
    const PlainTensor byDistance =
        toPlain(at::embedding(table, t5BucketsByDistance(n, true, c.t5.relativeBuckets, c.t5.relativeMaxDistance)).t().contiguous());
    auto split = [&](const at::Tensor& t) { return t.reshape({n, heads, dh}).transpose(0, 1).contiguous(); };
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string a = switchTransformersSublayer(l, 0), f = switchTransformersSublayer(l, 1);
        const at::Tensor normed = rmsNorm(x, weight(a + "layer_norm.weight"), eps);
        const at::Tensor q = split(at::linear(normed, weight(a + "SelfAttention.q.weight")));
        const at::Tensor k = split(at::linear(normed, weight(a + "SelfAttention.k.weight")));
        const at::Tensor v = split(at::linear(normed, weight(a + "SelfAttention.v.weight")));
        const at::Tensor probs = at::softmax(at::bmm(q, k.transpose(1, 2)) + bias, -1);
        const at::Tensor context = at::bmm(probs, v).transpose(0, 1).reshape({n, heads * dh});
        // The variants divide q·k by sqrt(d); T5 does not (its initialisation folds it in), so the
        // Q they are handed carries that factor back: `full` on it gives the content scores q·k.
        capture.q.push_back(q * std::sqrt(static_cast<double>(dh)));
        capture.k.push_back(k);
        capture.v.push_back(v);
        if (keepAttention) capture.attention.push_back(probs);
        capture.variantInputs.push_back({{"relative_bias", byDistance}});
        x = x + at::linear(context, weight(a + "SelfAttention.o.weight"));
        const at::Tensor ffIn = rmsNorm(x, weight(f + "layer_norm.weight"), eps);
        if (c.switchLayer(l)) {
            SwitchExpertLayout layout;
            layout.inner = "wi";
            layout.outer = "wo";
            layout.biases = false;
            layout.routerBias = c.t5.routerBias;
            x = x + model.switchFeedForward(ffIn, f, layout, capture);
        } else {
            capture.routerLogits.emplace_back();  // a dense layer: no router
            x = x + at::linear(model.activation(at::linear(ffIn, weight(f + "mlp.wi.weight"))), weight(f + "mlp.wo.weight"));
        }
        // As the reference reports them: the last hidden state is taken after the final norm.
        capture.hidden.push_back(l + 1 == c.numLayers ? rmsNorm(x, weight("encoder.final_layer_norm.weight"), eps) : x);
    }
    return capture;
}

}  // namespace

ModelForwardFn forward() { return &t5Forward; }

}  // namespace attnscope::engine::families::switch_transformers
