#pragma once
// The trainer's loop (see attnscope/train.h); engine.cpp wraps it in the error boundary.

#include <attnscope/train.h>

#include "base/runtime/buffer_pool.h"
#include "attention/variants/variant.h"

#include <functional>

namespace attnscope::engine {

/// Trains and writes the model folder. Throws EngineError / CancelledError, and OutOfBudget
/// before the optimiser state when the run would need more than `memoryBudget` bytes.
TrainReport trainModel(const TrainOptions& options, const Variant& variant, const ParamValues& params,
                       BufferPool& pool, const std::function<void(const TrainLogEntry&)>& onLog,
                       const ProgressFn& progress, std::uint64_t memoryBudget);

}  // namespace attnscope::engine
