#pragma once
// Rotary position embeddings (Su et al. 2021, RoFormer) as Hugging Face's Llama applies them: the
// inverse frequencies of `modeling_rope_utils` (default, linear, dynamic NTK, llama3, YaRN,
// LongRoPE), the "rotate half" layout (feature i pairs with i + r/2 of the r rotated features),
// cos and sin per position.

#include <attnscope/model_checkpoint.h>

#include <ATen/ATen.h>

namespace attnscope::engine {

/// [rotary dims / 2] F32 inverse frequencies for a text of `tokens` tokens (dynamic scaling and
/// LongRoPE depend on it; `maxPositions` is the config's max_position_embeddings).
at::Tensor ropeInverseFrequencies(const RopeSettings& rope, std::int64_t headDim, std::int64_t tokens, std::int64_t maxPositions);

/// YaRN's and LongRoPE's scale on cos and sin (attention_factor, else as HF derives it); 1 otherwise.
double ropeAttentionFactor(const RopeSettings& rope);

/// x [heads, n, headDim] turned by position: x·cos + rotate_half(x)·sin, with cos and sin of
/// position · inverse frequency (times `attentionFactor`), each frequency used for features i and
/// i + r/2 of the first r = 2 · frequencies features; the others pass unchanged (partial rotary).
at::Tensor applyRotary(const at::Tensor& x, const at::Tensor& inverseFrequencies, double attentionFactor = 1.0);

/// x [heads, n, r] turned by position with features 2i and 2i + 1 a pair (DeepSeek's checkpoints,
/// RoFormer's own layout), frequency i for pair i, cos and sin times `attentionFactor`.
at::Tensor applyPairRotary(const at::Tensor& x, const at::Tensor& inverseFrequencies, double attentionFactor = 1.0);

}  // namespace attnscope::engine
