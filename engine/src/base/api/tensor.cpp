#include <attnscope/tensor.h>

#include "base/runtime/huge_pages.h"

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
    // Large ones on huge pages (base/runtime/huge_pages.h): the zeros below are their first touch.
    switch (dtype) {
    case DType::F32: assignOnHugePages(t.f32, n, 0.0f); break;
    case DType::I64: assignOnHugePages(t.i64, n, std::int64_t{0}); break;
    case DType::I32: assignOnHugePages(t.i32, n, std::int32_t{0}); break;
    case DType::U8: assignOnHugePages(t.u8, n, std::uint8_t{0}); break;
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
