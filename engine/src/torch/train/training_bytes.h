#pragma once
// What a training run holds at its peak, counted before the optimiser state and the first batch
// are allocated, so that a model or batch too large for the memory budget is refused at once
// instead of failing (or swapping) steps later. The three trainers fill in their own shape.

#include <cstdint>
#include <string>

namespace attnscope::engine {

struct TrainingShape {
    std::int64_t parameters = 0;  ///< trainable values
    std::int64_t batch = 0;       ///< sequences per step
    std::int64_t queries = 0;     ///< positions per sequence and step
    std::int64_t keys = 0;        ///< keys each position attends (segment + memory, ring neighbours, …)
    std::int64_t layers = 0;      ///< layers (the Star-Transformer: cycles)
    std::int64_t heads = 0;
    std::int64_t dim = 0;         ///< model width; the feed-forward layer is 4 × dim wide
};

struct TrainingBytes {
    std::uint64_t state = 0;        ///< parameters, gradients and Adam's two moments
    std::uint64_t activations = 0;  ///< what autograd keeps of one step's forward pass
    std::uint64_t total() const { return state + activations; }
};

TrainingBytes trainingBytes(const TrainingShape& shape);

/// Throws EngineError(OutOfBudget) naming what to make smaller when `shape` needs more than `budget`.
void checkTrainingBudget(const TrainingShape& shape, std::uint64_t budget);

}  // namespace attnscope::engine
