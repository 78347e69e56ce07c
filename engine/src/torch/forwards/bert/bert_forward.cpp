// BERT's encoder forward (transformers' BertModel, post-LN): word + position (+ token type 0)
// embeddings, a LayerNorm, then per layer self-attention, residual and LayerNorm, the FFN (dense,
// or the trainer's Switch experts), residual and LayerNorm. RoBERTa runs the same
// (families/roberta), its positions starting after pad_token_id.

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::bert {
namespace {

ModelCapture encoderForward(TransformerModel& model, const at::Tensor& ids, bool keepAttention, const ProgressFn& progress) {
    const ModelConfig& c = model.config();
    const std::int64_t n = ids.size(0);
    const double eps = c.layerNormEps;
    auto weight = [&](const std::string& name) -> const at::Tensor& { return model.weight(name); };
    ModelCapture capture;
    at::Tensor positions = at::arange(c.positionOffset, c.positionOffset + n, at::kLong);
    at::Tensor x = at::embedding(weight("embeddings.word_embeddings.weight"), ids) +
                   at::embedding(weight("embeddings.position_embeddings.weight"), positions);
    if (c.typeVocabSize > 0) x = x + weight("embeddings.token_type_embeddings.weight")[0];
    x = at::layer_norm(x, {c.hiddenSize}, weight("embeddings.LayerNorm.weight"), weight("embeddings.LayerNorm.bias"), eps);
    capture.hidden.push_back(x);
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        checkModelProgress(progress, l, c.numLayers);
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        auto linear = [&](const at::Tensor& in, const std::string& base) {
            return at::linear(in, weight(p + base + ".weight"), weight(p + base + ".bias"));
        };
        at::Tensor context = model.attend(linear(x, "attention.self.query"), linear(x, "attention.self.key"),
                                          linear(x, "attention.self.value"), c.causal, keepAttention, capture);
        at::Tensor attnOut = at::layer_norm(x + linear(context, "attention.output.dense"), {c.hiddenSize},
                                            weight(p + "attention.output.LayerNorm.weight"),
                                            weight(p + "attention.output.LayerNorm.bias"), eps);
        const at::Tensor ffn = c.moe.active() ? model.switchFeedForward(attnOut, p, SwitchExpertLayout{}, capture)
                                              : linear(model.activation(linear(attnOut, "intermediate.dense")), "output.dense");
        x = at::layer_norm(attnOut + ffn, {c.hiddenSize}, weight(p + "output.LayerNorm.weight"),
                           weight(p + "output.LayerNorm.bias"), eps);
        capture.hidden.push_back(x);
    }
    return capture;
}

}  // namespace

ModelForwardFn forward() { return &encoderForward; }

}  // namespace attnscope::engine::families::bert
