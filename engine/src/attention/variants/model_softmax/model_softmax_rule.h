#pragma once
// The rule of a `model_softmax` result (attention/weights/softmax_score_rule.h) from its parameters and its
// relative bias: what the run and the weights both build.

#include "attention/weights/softmax_score_rule.h"

#include <attnscope/tensor.h>
#include <attnscope/variant_info.h>

#include <cstdint>

namespace attnscope::engine {

/// The name of the relative-bias input and diagnostic.
inline constexpr const char* kRelativeBias = "relative_bias";
/// Per head, the share of scored entries within 10 % of a soft-cap (written when softcap > 0).
inline constexpr const char* kSoftcapSaturation = "softcap_saturation";
/// The sink logits input and diagnostic ([H], GPT-OSS), and each row's share of the sink ([H, n]).
inline constexpr const char* kSinks = "sinks";
inline constexpr const char* kSinkShare = "sink_share";

/// `bias`: F32 [heads, n + m − 1], `sinks`: F32 [heads], each copied into the rule (or null:
/// none). Throws EngineError (InvalidInput) naming the rule a parameter or a tensor breaks.
SoftmaxScoreRule modelSoftmaxRule(const ParamValues& params, std::int64_t heads, std::int64_t n, std::int64_t m,
                                  std::int64_t d, const PlainTensor* bias, const PlainTensor* sinks = nullptr);

/// The reason its cells carry: Local within a window, Causal, else Dense.
ReasonBits modelSoftmaxReason(const SoftmaxScoreRule& rule);

}  // namespace attnscope::engine
