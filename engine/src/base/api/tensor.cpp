#include <attnscope/tensor.h>

namespace attnscope::engine {

const char* dtypeName(DType dtype) {
    switch (dtype) {
    case DType::F32: return "F32";
    case DType::I64: return "I64";
    case DType::I32: return "I32";
    case DType::U8: return "U8";
    }
    return "?";
}

std::size_t dtypeSize(DType dtype) {
    switch (dtype) {
    case DType::F32: return 4;
    case DType::I64: return 8;
    case DType::I32: return 4;
    case DType::U8: return 1;
    }
    return 0;
}

const void* PlainTensor::data() const { return const_cast<PlainTensor*>(this)->data(); }

void* PlainTensor::data() {
    switch (dtype) {
    case DType::F32: return f32.data();
    case DType::I64: return i64.data();
    case DType::I32: return i32.data();
    case DType::U8: return u8.data();
    }
    return nullptr;
}

PlainTensor PlainTensor::zeros(DType dtype, std::vector<std::int64_t> shape) {
    PlainTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    const auto n = static_cast<std::size_t>(t.numel());
    switch (dtype) {
    case DType::F32: t.f32.assign(n, 0.0f); break;
    case DType::I64: t.i64.assign(n, 0); break;
    case DType::I32: t.i32.assign(n, 0); break;
    case DType::U8: t.u8.assign(n, 0); break;
    }
    return t;
}

PlainTensor PlainTensor::fromF32(std::vector<std::int64_t> shape, std::vector<float> values) {
    PlainTensor t;
    t.dtype = DType::F32;
    t.shape = std::move(shape);
    t.f32 = std::move(values);
    return t;
}

PlainTensor PlainTensor::fromI64(std::vector<std::int64_t> shape, std::vector<std::int64_t> values) {
    PlainTensor t;
    t.dtype = DType::I64;
    t.shape = std::move(shape);
    t.i64 = std::move(values);
    return t;
}

PlainTensor PlainTensor::fromU8(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values) {
    PlainTensor t;
    t.dtype = DType::U8;
    t.shape = std::move(shape);
    t.u8 = std::move(values);
    return t;
}

}  // namespace attnscope::engine
