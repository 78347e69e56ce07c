#pragma once
// The rule of a `model_softmax` result (weights/softmax_score_rule.h) from its parameters and its
// relative bias: what the run and the weights both build.

#include "weights/softmax_score_rule.h"

#include <attnscope/tensor.h>
#include <attnscope/variant_info.h>

#include <cstdint>

namespace attnscope::engine {

/// The name of the relative-bias input and diagnostic.
inline constexpr const char* kRelativeBias = "relative_bias";
/// Per head, the share of scored entries within 10 % of a soft-cap (written when softcap > 0).
inline constexpr const char* kSoftcapSaturation = "softcap_saturation";

/// `bias`: F32 [heads, n + m − 1], copied into the rule (or null: none). Throws EngineError
/// (InvalidInput) naming the rule a parameter or the bias breaks.
SoftmaxScoreRule modelSoftmaxRule(const ParamValues& params, std::int64_t heads, std::int64_t n, std::int64_t m,
                                  std::int64_t d, const PlainTensor* bias);

/// The reason its cells carry: Local within a window, Causal, else Dense.
ReasonBits modelSoftmaxReason(const SoftmaxScoreRule& rule);

}  // namespace attnscope::engine
