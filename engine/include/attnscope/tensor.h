#pragma once
// PlainTensor: the torch-free tensor that crosses the engine's public API (row-major, C order).

#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace attnscope::engine {

enum class DType { F32, I64, I32, U8 };

/// safetensors spelling of a dtype ("F32", "I64", "I32", "U8").
const char* dtypeName(DType dtype);
std::size_t dtypeSize(DType dtype);

/// A dense tensor owned by value. Exactly one storage vector is used, chosen by `dtype`;
/// keeping typed vectors (instead of raw bytes) keeps element access aligned and type-safe.
struct PlainTensor {
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;
    std::vector<float> f32;
    std::vector<std::int64_t> i64;
    std::vector<std::int32_t> i32;
    std::vector<std::uint8_t> u8;

    std::int64_t numel() const {
        return std::accumulate(shape.begin(), shape.end(), std::int64_t{1},
                               [](std::int64_t a, std::int64_t b) { return a * b; });
    }
    const void* data() const;
    void* data();
    std::size_t byteSize() const { return static_cast<std::size_t>(numel()) * dtypeSize(dtype); }

    static PlainTensor zeros(DType dtype, std::vector<std::int64_t> shape);
    static PlainTensor fromF32(std::vector<std::int64_t> shape, std::vector<float> values);
    static PlainTensor fromI64(std::vector<std::int64_t> shape, std::vector<std::int64_t> values);
    static PlainTensor fromU8(std::vector<std::int64_t> shape, std::vector<std::uint8_t> values);
};

/// A float32 tensor whose storage may be shared between a result and the engine, which reuses
/// the storage for the next run only when no result holds it any more. Large buffers (dense
/// weights, outputs) use it so that repeated runs do not touch fresh memory (page faults).
struct SharedTensorF32 {
    std::vector<std::int64_t> shape;
    std::shared_ptr<const std::vector<float>> values;
    /// Instead of `values`: storage the engine never reuses, read in place (a result file's mapped
    /// bytes: a million-token output is 2 GiB, and a copy would cost seconds of fresh pages).
    std::shared_ptr<const float> inPlace;

    std::int64_t numel() const {
        return std::accumulate(shape.begin(), shape.end(), std::int64_t{1},
                               [](std::int64_t a, std::int64_t b) { return a * b; });
    }
    bool empty() const { return !values && !inPlace; }
    const float* data() const { return values ? values->data() : inPlace.get(); }
    float operator[](std::size_t i) const { return data()[i]; }
};

}  // namespace attnscope::engine
