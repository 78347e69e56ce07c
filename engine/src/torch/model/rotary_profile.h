#pragma once
// A rotary-position layer's mean attention score by relative distance, with the rotation the model
// applies and with it removed: RoPE's long-term decay (Su et al. 2021, §3.4.3) made visible on a
// real text. The Diagnostics tab's "Rotary positions" page draws it (docs/VARIANTS.md,
// "Llama-family decoders").

#include <attnscope/model_checkpoint.h>
#include <attnscope/types.h>

#include <ATen/ATen.h>

namespace attnscope::engine {

/// Longest text the profile is computed for: it costs two n²/2 dot-product sweeps per head.
constexpr std::int64_t kRotaryProfileMaxTokens = 4096;

/// `q`, `k` [heads, n, headDim]: a layer's queries and keys after the rotation (keys repeated per
/// query head). Un-rotates them with the same frequencies (the inverse rotation, divided by YaRN's
/// attention factor) and averages q_i·k_j/√d over the pairs at each distance i − j.
RotaryDistanceProfile rotaryDistanceProfile(const at::Tensor& q, const at::Tensor& k, const RopeSettings& rope,
                                            std::int64_t maxPositions);

}  // namespace attnscope::engine
