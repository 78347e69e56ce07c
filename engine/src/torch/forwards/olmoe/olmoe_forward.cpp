// olmoe runs the Llama decoder (io/families/llama/llama_forward.cpp); what differs is config data.

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::olmoe {

ModelForwardFn forward() { return families::llama::forward(); }

}  // namespace attnscope::engine::families::olmoe
