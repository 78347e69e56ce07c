#pragma once
// What one forward pass of a checkpoint allocates, counted before the pass so that a text too long
// for the memory budget is refused with nothing allocated (Engine::forwardModel, analyzeModel,
// modelAttentionBands). Plain C++: the tests compare it with the budget the engine enforces.

#include <attnscope/model_checkpoint.h>

#include <cstdint>

namespace attnscope::engine {

struct ModelPassBytes {
    /// the weights held as float32: every tensor, or for a Llama-family decoder its largest
    /// layer, the text's embedding rows and the final norm
    std::uint64_t weights = 0;
    std::uint64_t kept = 0;     ///< the capture: per layer Q, K, V, hidden states, variant inputs, attention
    std::uint64_t scratch = 0;  ///< the largest layer's temporaries (scores and softmax, FFN, residuals)
    std::uint64_t total() const { return weights + kept + scratch; }
};

/// For `n` tokens (after truncation to the model's positions); `keepAttention` adds every layer's
/// dense [heads, n, n] weights.
ModelPassBytes modelPassBytes(const ModelConfig& config, std::int64_t n, bool keepAttention);

}  // namespace attnscope::engine
