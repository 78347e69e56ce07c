#pragma once
// Q, K, V of one layer as every variant's run receives them: plain shared float storage, so that
// the torch-free runs (the launcher's) and the LibTorch ones take the same input. LibTorch code
// views them as tensors through torch/tensors/tensor_views.h.

#include <attnscope/attention_weights.h>

#include <cstdint>
#include <vector>

namespace attnscope::engine {

/// Contiguous float32 q [heads, n, d], k and v [heads, m, d]; each keeps its storage alive.
struct Qkv {
    SharedFloats q, k, v;
    std::vector<std::uint8_t> keyPadding;  ///< [m], 1 = padded; empty = none
    std::int64_t heads() const { return q.shape[0]; }
    std::int64_t n() const { return q.shape[1]; }
    std::int64_t m() const { return k.shape[1]; }
    std::int64_t d() const { return q.shape[2]; }
    const float* qHead(std::int64_t h) const { return q.data.get() + h * n() * d(); }
    const float* kHead(std::int64_t h) const { return k.data.get() + h * m() * d(); }
    const float* vHead(std::int64_t h) const { return v.data.get() + h * m() * d(); }
};

}  // namespace attnscope::engine
