// deepseek_v3 runs the DeepSeek decoder (io/families/deepseek_v2/deepseek_v2_forward.cpp).

#include "torch/model/family_forward.h"

namespace attnscope::engine::families::deepseek_v3 {

ModelForwardFn forward() { return families::deepseek_v2::forward(); }

}  // namespace attnscope::engine::families::deepseek_v3
