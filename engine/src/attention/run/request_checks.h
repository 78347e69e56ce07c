#pragma once
// Validation of requests before anything large is allocated (torch-free).

#include "base/runtime/run_context.h"
#include "attention/variants/variant.h"

#include <attnscope/memory_budget.h>
#include <attnscope/result.h>
#include <attnscope/types.h>

namespace attnscope::engine {

/// Explicit q, k, v given as plain tensors: dtypes and value counts checked, then moved into
/// shared storage (a copy: the request's tensors do not outlive it, the results' do).
Result<SharedQkv> shareExplicitQkv(const QkvTensors& qkv);

/// Shapes of explicit q, k, v ([H, n, d], [H, m, d], [H, m, dv]) and, when `values`, that every
/// value is finite (else see checkQkvValues).
Result<ProblemShape> checkExplicitQkv(const SharedQkv& qkv, bool values = true);

/// That every value of q, k and v is finite: the first NaN or infinity (q, then k, then v) named.
Result<void> checkQkvValues(const SharedQkv& qkv);

/// Shared q, k, v as a run's input (no copy: the variants only read them).
Qkv qkvOf(const SharedQkv& qkv);

/// heads, head dim and model dim within sane bounds.
Result<void> checkProjectionSpec(const ProjectionSpec& spec);

/// Refuses a request that needs more than `budget` bytes; `what` names what needs them.
Result<void> checkBudget(const std::string& what, std::uint64_t bytes, std::uint64_t budget, const ProblemShape& shape);

/// "1.5 GiB" style text for messages.


/// "40 s", "12 min", "3.5 h", "2.1 days" style text for messages.
std::string formatDuration(double seconds);

}  // namespace attnscope::engine
