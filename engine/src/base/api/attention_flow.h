#pragma once
// Attention flow (Abnar & Zuidema 2020): the attention graph across layers as a flow network,
// the value of the maximum flow from input token j to output token i.

#include <cstdint>
#include <functional>
#include <vector>

namespace attnscope::engine {

/// `layers` row-stochastic matrices, each [n * n] row-major (row = query at layer l + 1, column =
/// key at layer l), already including the residual mixing. Returns flow [n * n]: row i = output
/// token at the top, column j = input token. Costs n^2 max-flow problems on (layers + 1) n
/// nodes: callers keep n small.
std::vector<double> attentionFlow(const std::vector<std::vector<double>>& layers, std::int64_t n);

/// The row `output` of attentionFlow only: n max-flow problems. `keepGoing(done, total)`, when
/// given, is asked before each; false stops and returns an empty vector.
std::vector<double> attentionFlowToOutput(const std::vector<std::vector<double>>& layers, std::int64_t n, std::int64_t output,
                                          const std::function<bool(std::int64_t, std::int64_t)>& keepGoing = {});

}  // namespace attnscope::engine
