#pragma once
// Transformer-XL's evaluation speed (Dai et al. 2019, §3.2 and Table 9): per predicted token, a
// model that reads the text in segments with cached memory against the same model recomputing a
// window of the same attention length from scratch for every token (how a vanilla Transformer of
// that context evaluates). Both through the engine's own forward pass, on a model of fixed size
// with random weights, in a scratch engine so that the caller's open model stays.

#include <attnscope/progress.h>
#include <attnscope/result.h>

#include <cstdint>
#include <vector>

namespace attnscope::engine {

struct EvalSpeedSettings {
    std::int64_t segment = 16;   ///< L of the memory model (its memory M is the attention length)
    std::int64_t tokens = 1024;  ///< tokens the memory model reads (at least 4 attention lengths)
    std::int64_t windows = 32;   ///< windows the vanilla model recomputes (its time is per window)
    /// The model: byte vocabulary, kDModel wide, kHeads heads of kHeadDim, kInner, kLayers.
    static constexpr std::int64_t kDModel = 128, kHeads = 4, kHeadDim = 32, kInner = 512, kLayers = 4;
    static constexpr std::int64_t kMaxLength = 4096;
};

struct EvalSpeedPoint {
    std::int64_t length = 0;               ///< attention length: M for the memory model, the window for vanilla
    double memorySecondsPerToken = 0;      ///< Transformer-XL with cached memory
    double recomputeSecondsPerToken = 0;   ///< vanilla, the window recomputed per token
    double ratio() const { return memorySecondsPerToken > 0 ? recomputeSecondsPerToken / memorySecondsPerToken : 0; }
};

/// Measures one attention length (1 … kMaxLength). Errors: InvalidArgument (a length, segment,
/// token or window count out of range), Io (the scratch model folder), Cancelled.
Result<EvalSpeedPoint> measureTransfoXlEvalSpeed(const EvalSpeedSettings& settings, std::int64_t length,
                                                 const ProgressFn& progress = {});

}  // namespace attnscope::engine
