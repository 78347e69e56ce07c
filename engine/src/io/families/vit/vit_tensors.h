#pragma once
// The Vision Transformer's tensors as Hugging Face's ViTModel / DeiTModel name them, without the
// "vit." / "deit." prefix of a ForImageClassification file.

#include <attnscope/model_checkpoint.h>

#include <string>
#include <vector>

namespace attnscope::engine {

/// The tensor every ViT checkpoint has (its prefix is found from it).
inline const char* vitPatchProjectionWeight() { return "embeddings.patch_embeddings.projection.weight"; }
inline const char* vitClsToken() { return "embeddings.cls_token"; }

std::vector<ExpectedTensor> expectedVitTensors(const ModelConfig& config);

/// "encoder.layer.N." (then "attention.attention.query.weight", "layernorm_before.weight", …).
std::string vitLayerPrefix(std::int64_t layer);

}  // namespace attnscope::engine
