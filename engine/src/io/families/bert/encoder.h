#pragma once
// BERT's encoder as Hugging Face's BertModel names it, which RoBERTa and the project's trainer
// folders share (families/roberta): config fields, tensors, and the attention of its layers.

#include "io/families/family.h"

namespace attnscope::engine {

/// The defaults of the config class (BertConfig, RobertaConfig) for fields config.json leaves out.
struct EncoderDefaults {
    std::int64_t vocab = 30522, maxPositions = 512, typeVocab = 2, padTokenId = 0;
    double layerNormEps = 1e-12;
};

/// Reads the encoder's fields: sizes, positions (absolute only), is_decoder (causal), hidden_act,
/// and num_experts with its router's settings (the trainer's Switch layers).
Result<void> readEncoderConfig(const config_fields::FieldReader& f, ModelConfig& c, const EncoderDefaults& d);
/// embeddings.*, encoder.layer.N.* (dense FFN or the trainer's Switch experts).
std::vector<ExpectedTensor> encoderTensors(const ModelConfig& c);
/// Softmax over every key, causal only with is_decoder (or the trained variant: takesTrainedVariant).
LayerAttention encoderAttention(const ModelConfig& c, std::int64_t layer);

}  // namespace attnscope::engine
