// The Vision Transformer encoder (Dosovitskiy et al. 2021; Hugging Face's ViTModel and DeiTModel):
// P × P patches through the patch embedding, [CLS] (and DeiT's distillation token) before them,
// learnt positions added, then pre-LN layers: x + attention(LN(x)), then x + MLP(LN(x)).

#include "torch/model/family_forward.h"
#include "io/families/vit/vit_tensors.h"

namespace attnscope::engine::families::vit {
namespace {

ModelCapture encoderForward(TransformerModel& model, const at::Tensor& pixels, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    auto weight = [&](const std::string& name) -> const at::Tensor& { return model.weight(name); };
    const std::int64_t h = c.hiddenSize, p = c.vit.patchSize;
    const double eps = c.layerNormEps;
    ModelCapture capture;
    // The patch embedding is a convolution with stride P: one linear map per patch.
    const at::Tensor grid = at::conv2d(pixels.unsqueeze(0), weight(vitPatchProjectionWeight()),
                                       weight("embeddings.patch_embeddings.projection.bias"), {p, p});  // [1, h, rows, cols]
    std::vector<at::Tensor> parts;
    if (c.vit.clsToken) parts.push_back(weight(vitClsToken()).reshape({1, h}));
    if (c.vit.distillationToken) parts.push_back(weight("embeddings.distillation_token").reshape({1, h}));
    parts.push_back(grid.flatten(2).squeeze(0).transpose(0, 1));  // [rows · cols, h], raster order
    at::Tensor x = at::cat(parts, 0) + weight("embeddings.position_embeddings").reshape({-1, h});
    capture.hidden.push_back(x);
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string layer = vitLayerPrefix(l);
        auto linear = [&](const at::Tensor& in, const std::string& base, bool bias = true) {
            return bias ? at::linear(in, weight(layer + base + ".weight"), weight(layer + base + ".bias"))
                        : at::linear(in, weight(layer + base + ".weight"));
        };
        auto norm = [&](const at::Tensor& in, const std::string& base) {
            return at::layer_norm(in, {h}, weight(layer + base + ".weight"), weight(layer + base + ".bias"), eps);
        };
        const at::Tensor a = norm(x, "layernorm_before");
        const bool bias = c.vit.qkvBias;
        const at::Tensor context = model.attend(linear(a, "attention.attention.query", bias), linear(a, "attention.attention.key", bias),
                                          linear(a, "attention.attention.value", bias), /*causal=*/false, keepAttention, capture);
        x = x + linear(context, "attention.output.dense");
        x = x + linear(model.activation(linear(norm(x, "layernorm_after"), "intermediate.dense")), "output.dense");
        capture.hidden.push_back(x);
    }
    return capture;
}

}  // namespace

ModelForwardFn forward() { return &encoderForward; }

}  // namespace attnscope::engine::families::vit
