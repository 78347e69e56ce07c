#pragma once
// The pattern variants' dense-plan fast path (DensePlan, sparse_kernel.h), used by runSparseKernel.

#include "variants/sparse_kernel.h"

namespace attnscope::engine {

/// Fills result.output (and row status, counters) from the variant's dense plan. Returns false,
/// having done nothing, when the variant has no plan for these parameters. Needs no padding.
bool runDensePlanKernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const SparseKernelInput& input,
                        RunContext& ctx, AttentionResult& result);

}  // namespace attnscope::engine
