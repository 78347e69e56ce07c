#pragma once
// ggml's block formats (GGUF tensors) turned into float32, a row or a layer at a time. Each block
// stores its own scale(s) in half precision and its values as small integers: the 32-value
// formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) one scale (and a minimum) per block, the 256-value
// "K" formats (Q2_K … Q6_K) a half-precision super-scale times a 4- to 8-bit scale per group of
// 16 or 32. The arithmetic is ggml's own, float for float, so values equal llama.cpp's.

#include <cstdint>

namespace attnscope::engine {

/// Whether `dequantizeGgml` has a kernel for ggml type `type` (F32, F16, BF16, Q4_0, Q4_1, Q5_0,
/// Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K).
bool ggmlTypeDequantizable(std::uint32_t type);

/// Dequantizes `elements` values of type `type` starting at `src` (a whole number of its blocks,
/// from a block boundary) into `out`. Takes the AVX2 path where the CPU has it and the kernel path
/// allows (base/kernels/cpu_features.h); false for a type without a kernel.
bool dequantizeGgml(std::uint32_t type, const std::uint8_t* src, std::int64_t elements, float* out);

}  // namespace attnscope::engine
