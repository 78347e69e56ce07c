#pragma once
// The "random projections" Q/K/V source: token embedding + sinusoidal position, then per-head
// W_q, W_k, W_v, all drawn from the request seed with our own generator (bit-identical across
// runs and LibTorch versions).

#include "base/runtime/run_context.h"

#include <attnscope/types.h>

namespace attnscope::engine {

/// x: [n, D] = embed(token) + sinusoid(position); q, k, v: [heads, n, headDim] = x W_{q,k,v}[h].
/// Embeddings depend only on (seed, token id), so equal tokens get equal embeddings.
/// W entries ~ N(0, 1/D); embedding entries ~ N(0, 1). `progress` (stage "qkv", rows done) is
/// asked between blocks of rows; throws CancelledError when it says stop.
Qkv randomProjections(const TokenizedInput& input, const ProjectionSpec& spec, const ProgressFn& progress = {});

/// q, k, v: [heads, n, headDim] = x W_{q,k,v}[h] for token states x [n, D] (D = spec's model
/// dimension): the seeded per-head projections every random-projection input shares.
Qkv projectTokenStates(PlainTensor states, const ProjectionSpec& spec, const ProgressFn& progress = {});

}  // namespace attnscope::engine
