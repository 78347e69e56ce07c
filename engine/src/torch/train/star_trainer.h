#pragma once
// Trains a small Star-Transformer encoder (fastNLP's names) on a task where the relay matters and
// writes a folder that Engine::runStar and `attnscope-cli star --model` read (docs/TRAINER.md).
//
// Task `first`: sequences of `length` letters a–h; every position is tagged with the sequence's
// first letter. A satellite n positions away from the first one cannot see it through the ring in
// fewer than n cycles; through the relay it can in two. `starRelay = false` trains the ablation
// without the relay key (the comparison the sample reports).

#include <attnscope/progress.h>
#include <attnscope/train.h>

#include <functional>

namespace attnscope::engine {

/// Throws EngineError / CancelledError, and OutOfBudget over `memoryBudget` bytes.
TrainReport trainStarTransformer(const TrainOptions& options, const std::function<void(const TrainLogEntry&)>& onLog,
                                 const ProgressFn& progress, std::uint64_t memoryBudget);

}  // namespace attnscope::engine
