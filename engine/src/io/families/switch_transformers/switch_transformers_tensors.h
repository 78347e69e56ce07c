#pragma once
// The encoder tensors of a Switch Transformers checkpoint, as Hugging Face's SwitchTransformers
// names them (no base-model prefix): `encoder.block.N.layer.0` self-attention, `layer.1` the FFN
// (dense `mlp.wi`/`mlp.wo`, or a Switch layer's router and `mlp.experts.expert_{e}.wi`/`wo`).

#include <attnscope/model_checkpoint.h>

#include <string>
#include <vector>

namespace attnscope::engine {

std::vector<ExpectedTensor> expectedSwitchTransformersTensors(const ModelConfig& config);

/// The token embedding: "shared.weight", which encoder-only exports may store only as
/// kSwitchTransformersEncoderEmbedding (the same tied matrix).
inline constexpr const char* kSwitchTransformersEmbedding = "shared.weight";
inline constexpr const char* kSwitchTransformersEncoderEmbedding = "encoder.embed_tokens.weight";

/// "encoder.block.N.layer.S." (S = 0: attention, 1: FFN).
std::string switchTransformersSublayer(std::int64_t block, int sublayer);

}  // namespace attnscope::engine
