#pragma once
// Llama-family checkpoints (`llama`, `mistral`, `qwen2`, `qwen3`, and the sparse experts of
// `mixtral`, `qwen2_moe`, `olmoe`) as Hugging Face names them: config.json's fields (their config
// classes' names and defaults) and the decoder's tensors without the "model." prefix of a
// ForCausalLM file.

#include <attnscope/model_checkpoint.h>

#include "checkpoint/config_fields.h"

#include <string>
#include <vector>

namespace attnscope::engine {

/// Fills `c` (arch already Llama) from config.json. Refuses, naming the field, what the forward
/// pass does not compute: a rope_scaling type other than linear, dynamic, llama3 or yarn, an
/// activation other than SiLU, heads that do not divide into key/value groups.
Result<void> readLlamaConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c);

/// The model types read by readLlamaConfig.
bool isLlamaFamily(const std::string& modelType);

std::vector<ExpectedTensor> expectedLlamaTensors(const ModelConfig& config);

/// "layers.N." (then "self_attn.q_proj.weight", "mlp.gate_proj.weight", …).
std::string llamaLayerPrefix(std::int64_t layer);
/// A sparse layer's router [experts, hidden]: Mixtral's block_sparse_moe.gate, else mlp.gate.
std::string llamaRouterWeight(const ModelConfig& config, const std::string& layerPrefix);

/// The three matrices of a SwiGLU expert: down(silu(gate x) · up x).
struct LlamaExpertNames {
    std::string gate, up, down;
};
/// Expert e of the layer: Mixtral's block_sparse_moe.experts.e.{w1,w3,w2}, else mlp.experts.e.{gate,up,down}_proj.
LlamaExpertNames llamaExpertNames(const ModelConfig& config, const std::string& layerPrefix, std::int64_t expert);

}  // namespace attnscope::engine
