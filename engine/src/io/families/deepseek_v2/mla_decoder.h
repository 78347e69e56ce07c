#pragma once
// The DeepSeek decoder (Hugging Face DeepseekV2Model, DeepseekV3Model), shared by `deepseek_v2` and
// `deepseek_v3` (each its own folder): multi-head latent attention (DeepseekSettings), a dense
// SwiGLU MLP in the first first_k_dense_replace layers, then routed SwiGLU experts beside shared
// ones. What the two differ in (the router's scores, its groups, defaults) each folder's traits say.

#include "io/families/family.h"

namespace attnscope::engine {

struct MlaTraits {
    std::int64_t vocab = 102400, hidden = 4096, intermediate = 11008, moeIntermediate = 1407, layers = 30, heads = 32;
    std::int64_t maxPositions = 2048, qLoraRank = 1536;
    bool v3 = false;  ///< sigmoid scores with a choice bias, groups scored by their two best, rope_interleave read
};

Result<void> readMlaConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c, const MlaTraits& t);
std::vector<ExpectedTensor> mlaTensors(const ModelConfig& c);
/// Causal softmax of scale · (q_nope·k_nope + q_rope·k_rope) over every earlier key.
LayerAttention mlaAttention(const ModelConfig& c, std::int64_t layer);
/// An entry with the tensors, attention and budget filled in.
FamilyEntry mlaEntry();

}  // namespace attnscope::engine
