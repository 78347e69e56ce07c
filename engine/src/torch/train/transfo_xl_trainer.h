#pragma once
// Trains a small byte-level Transformer-XL language model on a text (docs/TRAINER.md): segments
// of L bytes, each layer's memory of the last M layer inputs carried from segment to segment with
// stop-gradient (Dai et al. 2019, §3.2), relative attention, written in Hugging Face's TransfoXL
// layout so that --model opens it.

#include <attnscope/progress.h>
#include <attnscope/train.h>

#include <functional>

namespace attnscope::engine {

/// Throws EngineError / CancelledError, and OutOfBudget over `memoryBudget` bytes.
TrainReport trainTransfoXl(const TrainOptions& options, const std::function<void(const TrainLogEntry&)>& onLog,
                           const ProgressFn& progress, std::uint64_t memoryBudget);

}  // namespace attnscope::engine
