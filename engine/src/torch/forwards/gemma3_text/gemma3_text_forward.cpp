// gemma3_text runs the Gemma decoder (io/families/gemma2/gemma2_forward.cpp); what differs is config data.

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::gemma3_text {

ModelForwardFn forward() { return families::gemma2::forward(); }

}  // namespace attnscope::engine::families::gemma3_text
