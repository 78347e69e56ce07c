#include "base/api/param_access.h"
#include "attention/weights/kept_state.h"
#include "attention/weights/softmax_row_weights.h"

#include <cmath>

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeFullWeights(const KeptState& state) {
    // (the kept statistics are the file's contract; the weights normalise their own scores)
    state.stat("row_max", DType::F32, {state.heads, state.n});
    state.stat("row_sum", DType::F32, {state.heads, state.n});
    SoftmaxScoreRule rule;
    rule.scale = 1.0f / std::sqrt(static_cast<float>(state.d));
    rule.causal = paramBool(state.params, "causal");
    const auto reason = static_cast<ReasonBits>(1u << static_cast<unsigned>(rule.causal ? PatternReason::Causal : PatternReason::Dense));
    return std::make_shared<SoftmaxRowWeights>(state.q, state.k, rule, state.keyPadding, state.queryPadding(), reason);
}

}  // namespace attnscope::engine
