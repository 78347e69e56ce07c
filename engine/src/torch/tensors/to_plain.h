#pragma once
// The one-way exit from LibTorch: tensors become plain API types (CONVENTIONS.md §1).

#include <attnscope/tensor.h>

#include <ATen/ATen.h>

namespace attnscope::engine {

/// Copies a float32, int64, int32, uint8 or bool tensor (any layout) into a PlainTensor.
/// Bool becomes U8. Other dtypes are converted to float32.
PlainTensor toPlain(const at::Tensor& tensor);

}  // namespace attnscope::engine
