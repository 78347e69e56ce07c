// qwen3 runs the Llama decoder (io/families/llama/llama_forward.cpp); what differs is config data.

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::qwen3 {

ModelForwardFn forward() { return families::llama::forward(); }

}  // namespace attnscope::engine::families::qwen3
