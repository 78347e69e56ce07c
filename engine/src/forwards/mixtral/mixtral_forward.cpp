// mixtral runs the Llama decoder (families/llama/llama_forward.cpp); what differs is config data.

#include "model/family_forward.h"

namespace attnscope::engine::families::mixtral {

ModelForwardFn forward() { return families::llama::forward(); }

}  // namespace attnscope::engine::families::mixtral
