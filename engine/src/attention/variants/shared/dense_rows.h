#pragma once
// The shared driver of `topk` and `entmax`: they need whole score rows, computed here in blocks
// of query rows (never the whole n x m at once), the two products through the BLAS, without
// LibTorch. A per-row function turns the scores into weights and records the row statistics its
// weights are recomputed from.

#include "attention/variants/variant.h"

#include <cstdint>
#include <functional>
#include <string>

namespace attnscope::engine {

/// Called for each (head, query) that has at least one admissible key. `row`: [m] raw scores
/// q·k (unscaled; multiply by `scale` for s/sqrt(d)), masked keys -inf. It must overwrite row
/// with the weights (0 outside the kept set). Heads run on several threads at once: `worker`
/// (in [0, denseRowWorkers(heads))) indexes the caller's per-thread scratch.
using DenseRowFn = std::function<void(int head, std::int64_t query, float* row, float scale, int worker)>;

/// The workers runDenseRows uses for `heads` heads.
int denseRowWorkers(std::int64_t heads);

struct DenseRowInput {
    bool causal = false;
    std::string slot;  ///< the variant id
};

/// q: [heads, n, d], k, v: [heads, m, d]. Fills output, rowStatus and counters; rows with no
/// admissible key (status 1) and padded queries (status 2) never reach rowFn.
void runDenseRows(const Qkv& qkv, const DenseRowInput& input, const DenseRowFn& rowFn, RunContext& ctx,
                  AttentionResult& result);

}  // namespace attnscope::engine
