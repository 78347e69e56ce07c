#include "torch/tensors/tensor_views.h"

namespace attnscope::engine {
namespace {

struct TensorScratch final : BufferPool::OpaqueScratch {
    at::Tensor tensor = at::empty({0}, at::kFloat);
    std::uint64_t bytes() const override { return tensor.storage().nbytes(); }
};

}  // namespace

at::Tensor tensorOf(const SharedFloats& floats) {
    return at::from_blob(const_cast<float*>(floats.data.get()), floats.shape, at::kFloat);
}

SharedFloats shareTensor(const at::Tensor& tensor) {
    auto holder = std::make_shared<at::Tensor>(tensor.to(at::kFloat).contiguous());
    SharedFloats out;
    out.shape.assign(holder->sizes().begin(), holder->sizes().end());
    out.data = std::shared_ptr<const float>(holder, holder->data_ptr<float>());
    return out;
}

Qkv qkvOf(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    Qkv out;
    out.q = shareTensor(q);
    out.k = shareTensor(k);
    out.v = shareTensor(v);
    return out;
}

at::Tensor workspace(BufferPool& pool, const std::string& slot, at::IntArrayRef sizes) {
    auto& held = pool.opaqueScratch(slot);
    if (!held) held = std::make_unique<TensorScratch>();
    at::Tensor& t = static_cast<TensorScratch&>(*held).tensor;
    t.resize_(sizes);  // keeps the storage when it is large enough
    return t;
}

at::Tensor tensorOver(std::vector<float>& values, at::IntArrayRef sizes) {
    return at::from_blob(values.data(), sizes, at::TensorOptions().dtype(at::kFloat));
}

}  // namespace attnscope::engine
