#pragma once
// What a Switch feed-forward layer costs against the dense FFN of the same active size (Fedus et
// al. 2021 §2: each token meets one expert, so FLOPs per token stay those of one FFN while the
// parameters grow E-fold): wall time of one pass of each over the same tokens, and the bytes each
// holds (weights) and makes (activations). Both run the trainer's own layer code on random weights
// of a fixed size.

#include <attnscope/progress.h>
#include <attnscope/result.h>

#include <cstdint>

namespace attnscope::engine {

struct SwitchFfnCostSettings {
    std::int64_t dModel = 256, dFF = 1024;
    std::int64_t experts = 8;      ///< 1 … 256
    double capacityFactor = 1.25;  ///< 0 = dropless
    int repeats = 5;               ///< timed passes of each (the median is reported), after one untimed
    static constexpr std::int64_t kMaxTokens = 1 << 16;
};

struct SwitchFfnCostPoint {
    std::int64_t tokens = 0;
    double denseSeconds = 0;   ///< one dense FFN over the tokens (median pass)
    double switchSeconds = 0;  ///< the Switch layer: router, dispatch, E experts, combine
    std::uint64_t denseWeightBytes = 0, switchWeightBytes = 0;
    /// Activations made: the dense inner [n, d_ff]; the Switch layer's logits and probabilities
    /// [n, E], each expert's gathered input, inner and output for the tokens it keeps.
    std::uint64_t denseActivationBytes = 0, switchActivationBytes = 0;
    std::int64_t capacity = 0;  ///< slots per expert (0: unlimited)
    std::int64_t dropped = 0;   ///< tokens past their expert's capacity
    double ratio() const { return denseSeconds > 0 ? switchSeconds / denseSeconds : 0; }
};

/// Measures `tokens` tokens (1 … kMaxTokens). Errors: InvalidArgument (a size, expert count,
/// capacity factor or repeat count out of range, naming it), Cancelled (between passes).
Result<SwitchFfnCostPoint> measureSwitchFfnCost(const SwitchFfnCostSettings& settings, std::int64_t tokens,
                                                const ProgressFn& progress = {});

}  // namespace attnscope::engine
