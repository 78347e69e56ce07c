#pragma once
// Llama-family checkpoints (`llama`, `mistral`, and `mixtral`'s sparse experts) as Hugging Face names them: config.json's fields
// (LlamaConfig / MistralConfig names and defaults) and the decoder's tensors without the
// "model." prefix of a ForCausalLM file.

#include <attnscope/model_checkpoint.h>

#include "checkpoint/config_fields.h"

#include <string>
#include <vector>

namespace attnscope::engine {

/// Fills `c` (arch already Llama) from config.json. Refuses, naming the field, what the forward
/// pass does not compute: a rope_scaling type other than linear, dynamic or llama3, an
/// activation other than SiLU, heads that do not divide into key/value groups.
Result<void> readLlamaConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c);

std::vector<ExpectedTensor> expectedLlamaTensors(const ModelConfig& config);

/// "layers.N." (then "self_attn.q_proj.weight", "mlp.gate_proj.weight", …).
std::string llamaLayerPrefix(std::int64_t layer);
/// Mixtral's expert e under "layers.N.": "layers.N.block_sparse_moe.experts.e." (then w1, w2, w3).
std::string mixtralExpertPrefix(const std::string& layerPrefix, std::int64_t expert);

}  // namespace attnscope::engine
