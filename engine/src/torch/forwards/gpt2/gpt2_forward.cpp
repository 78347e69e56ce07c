// GPT-2's forward (transformers' GPT2Model, pre-LN): token + position embeddings, then per layer
// x + attention(LN(x)) causally, x + MLP(LN(x)); the last hidden state after ln_f, as the
// reference reports it. Its linear layers are Conv1D: y = x W + b with W stored [in, out].

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::gpt2 {
namespace {

ModelCapture decoderForward(TransformerModel& model, const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    const std::int64_t n = ids.size(0), h = c.hiddenSize;
    const double eps = c.layerNormEps;
    auto weight = [&](const std::string& name) -> const at::Tensor& { return model.weight(name); };
    ModelCapture capture;
    at::Tensor x = at::embedding(weight("wte.weight"), ids) + at::embedding(weight("wpe.weight"), at::arange(n, at::kLong));
    capture.hidden.push_back(x);
    auto conv1d = [&](const at::Tensor& in, const std::string& base) {
        return at::addmm(weight(base + ".bias"), in, weight(base + ".weight"));
    };
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string p = "h." + std::to_string(l) + ".";
        at::Tensor a = at::layer_norm(x, {h}, weight(p + "ln_1.weight"), weight(p + "ln_1.bias"), eps);
        at::Tensor qkv = conv1d(a, p + "attn.c_attn");
        auto parts = qkv.split(h, 1);
        at::Tensor context = model.attend(parts[0], parts[1], parts[2], true, keepAttention, capture);
        x = x + conv1d(context, p + "attn.c_proj");
        at::Tensor m = at::layer_norm(x, {h}, weight(p + "ln_2.weight"), weight(p + "ln_2.bias"), eps);
        x = x + conv1d(model.activation(conv1d(m, p + "mlp.c_fc")), p + "mlp.c_proj");
        capture.hidden.push_back(l + 1 == c.numLayers
                                     ? at::layer_norm(x, {h}, weight("ln_f.weight"), weight("ln_f.bias"), eps)
                                     : x);
    }
    return capture;
}

}  // namespace

ModelForwardFn forward() { return &decoderForward; }

}  // namespace attnscope::engine::families::gpt2
