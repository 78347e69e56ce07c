#pragma once
// The tensors of a Transformer-XL checkpoint, as Hugging Face's TransfoXL names them (without the
// "transformer." prefix), for the case the engine reads: no adaptive embeddings.

#include <attnscope/model_checkpoint.h>

#include <string>
#include <vector>

namespace attnscope::engine {

std::vector<ExpectedTensor> expectedTransfoXlTensors(const ModelConfig& config);

/// Names of layer l's tensors (also what the forward pass reads).
std::string transfoXlLayerName(std::int64_t layer, const std::string& leaf);

}  // namespace attnscope::engine
