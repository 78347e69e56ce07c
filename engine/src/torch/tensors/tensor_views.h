#pragma once
// LibTorch's view of the plain run inputs and scratch: Q, K, V and pooled buffers as tensors,
// without copying.

#include "base/runtime/buffer_pool.h"
#include "base/runtime/qkv.h"

#include <attnscope/attention_weights.h>

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace attnscope::engine {

/// The shared floats as a tensor of their shape (no copy; read-only use: the storage is shared).
at::Tensor tensorOf(const SharedFloats& floats);

/// A tensor's storage as SharedFloats (the tensor, contiguous float32, stays alive with it).
SharedFloats shareTensor(const at::Tensor& tensor);

/// Q, K, V from tensors (each made contiguous float32 and kept alive by the result).
Qkv qkvOf(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

/// A scratch tensor [sizes] of the pool's slot that stays valid until the next call with the same
/// slot. Grows its storage only when needed; never shrinks.
at::Tensor workspace(BufferPool& pool, const std::string& slot, at::IntArrayRef sizes);

/// Wraps a vector's memory as a tensor without copying. The vector must outlive the tensor.
at::Tensor tensorOver(std::vector<float>& values, at::IntArrayRef sizes);

}  // namespace attnscope::engine
