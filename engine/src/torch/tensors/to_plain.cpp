#include "torch/tensors/to_plain.h"

#include <cstring>

namespace attnscope::engine {

PlainTensor toPlain(const at::Tensor& tensor) {
    at::Tensor t = tensor.contiguous();
    std::vector<std::int64_t> shape(t.sizes().begin(), t.sizes().end());
    switch (t.scalar_type()) {
    case at::kLong: return PlainTensor::fromI64(shape, std::vector<std::int64_t>(t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + t.numel()));
    case at::kInt: {
        PlainTensor p = PlainTensor::zeros(DType::I32, shape);
        std::memcpy(p.i32.data(), t.data_ptr<std::int32_t>(), p.byteSize());
        return p;
    }
    case at::kByte: return PlainTensor::fromU8(shape, std::vector<std::uint8_t>(t.data_ptr<std::uint8_t>(), t.data_ptr<std::uint8_t>() + t.numel()));
    case at::kBool: return toPlain(t.to(at::kByte));
    case at::kFloat: return PlainTensor::fromF32(shape, std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel()));
    default: return toPlain(t.to(at::kFloat));
    }
}

}  // namespace attnscope::engine
