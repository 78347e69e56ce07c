#pragma once
// Vision Transformer checkpoints (`vit`: ViT and DINO, `deit`: DeiT) as Hugging Face names them:
// config.json's fields (ViTConfig / DeiTConfig names and defaults) and the encoder's tensors
// without the "vit." / "deit." prefix of a ForImageClassification file.

#include <attnscope/model_checkpoint.h>

#include "checkpoint/config_fields.h"

#include <string>
#include <vector>

namespace attnscope::engine {

/// The model types read by readVitConfig.
bool isVitFamily(const std::string& modelType);

/// Fills `c` (arch already Vit) from config.json. Refuses, naming the field, a patch size that
/// does not divide the image size and channels other than 3.
Result<void> readVitConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c);

/// The tensor every ViT checkpoint has (its prefix is found from it).
inline const char* vitPatchProjectionWeight() { return "embeddings.patch_embeddings.projection.weight"; }
inline const char* vitClsToken() { return "embeddings.cls_token"; }

std::vector<ExpectedTensor> expectedVitTensors(const ModelConfig& config);

/// "encoder.layer.N." (then "attention.attention.query.weight", "layernorm_before.weight", …).
std::string vitLayerPrefix(std::int64_t layer);

}  // namespace attnscope::engine
