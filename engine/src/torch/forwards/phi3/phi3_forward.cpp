// phi3 runs the Llama decoder (io/families/llama/llama_forward.cpp) with its fused projections.

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::phi3 {

ModelForwardFn forward() { return families::llama::forward(); }

}  // namespace attnscope::engine::families::phi3
