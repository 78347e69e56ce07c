#pragma once
// A latent-attention layer (DeepSeek's MLA) made visible: the spectrum of every head's non-rotary
// keys, which one low-rank latent makes (Linformer's low rank, built into the model), and each
// head's score split into its non-rotary and rotary products. The Diagnostics tab's "Latent keys"
// page draws it (docs/VARIANTS.md, "DeepSeek-V2 and V3").

#include <attnscope/types.h>

#include <ATen/ATen.h>

namespace attnscope::engine {

/// Longest text the profile is computed for (an SVD of n × heads·nope and two n²/2 sweeps per head).
constexpr std::int64_t kLatentProfileMaxTokens = 4096;

/// `q`, `k` [heads, n, nope + rope]: a layer's queries and keys as its softmax takes them.
LatentAttentionProfile latentAttentionProfile(const at::Tensor& q, const at::Tensor& k, std::int64_t nope, std::int64_t rope,
                                              std::int64_t latentRank);

}  // namespace attnscope::engine
