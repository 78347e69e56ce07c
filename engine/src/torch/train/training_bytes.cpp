#include "torch/train/training_bytes.h"

#include "base/api/engine_error.h"
#include "attention/run/request_checks.h"

#include <algorithm>

namespace attnscope::engine {

TrainingBytes trainingBytes(const TrainingShape& s) {
    using U = std::uint64_t;
    const auto u = [](std::int64_t v) { return static_cast<U>(std::max<std::int64_t>(v, 0)); };
    TrainingBytes bytes;
    bytes.state = 4 * u(s.parameters) * sizeof(float);
    // Per layer and position, autograd keeps the layer input and its norm, Q, K, V, the context,
    // the projections and the feed-forward's two 4 × dim activations (about 20 × dim values), and
    // per head the scores, the softmax and its dropout-free copy (3 × keys).
    const U perPosition = 20 * u(s.dim) + 3 * u(s.heads) * u(s.keys);
    bytes.activations = u(s.layers) * u(s.batch) * u(s.queries) * perPosition * sizeof(float);
    return bytes;
}

void checkTrainingBudget(const TrainingShape& shape, std::uint64_t budget) {
    const TrainingBytes need = trainingBytes(shape);
    if (need.total() <= budget) return;
    throw EngineError(ErrorCode::OutOfBudget,
                      "training needs " + formatBytes(need.total()) + " (parameters and optimiser state " +
                          formatBytes(need.state) + ", activations of a batch of " + std::to_string(shape.batch) + " × " +
                          std::to_string(shape.queries) + " positions " + formatBytes(need.activations) +
                          "), over the memory budget of " + formatBytes(budget) +
                          ": lower --batch, --length, --dim or --layers, or raise the memory budget");
}

}  // namespace attnscope::engine
