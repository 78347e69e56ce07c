#pragma once
// Validation of requests before anything large is allocated.

#include "core/run_context.h"
#include "variants/variant.h"

#include <attnscope/result.h>
#include <attnscope/types.h>

namespace attnscope::engine {

/// Shapes and dtypes of explicit q, k, v ([H, n, d], [H, m, d], [H, m, dv]) and, when `values`,
/// that every value is finite (else see checkQkvValues).
Result<ProblemShape> checkExplicitQkv(const QkvTensors& qkv, bool values = true);

/// That every value of q, k and v is finite: the first NaN or infinity (q, then k, then v) named.
Result<void> checkQkvValues(const QkvTensors& qkv);

/// Wraps explicit q, k, v as tensors without copying (the QkvTensors must outlive the run).
Qkv wrapExplicitQkv(const QkvTensors& qkv);

/// heads, head dim and model dim within sane bounds.
Result<void> checkProjectionSpec(const ProjectionSpec& spec);

/// Refuses a request whose n x n matrices need more than `budget` bytes.
Result<void> checkBudget(const std::string& variant, std::uint64_t bytes, std::uint64_t budget, const ProblemShape& shape);

/// "1.5 GiB" style text for messages.
std::string formatBytes(std::uint64_t bytes);

}  // namespace attnscope::engine
