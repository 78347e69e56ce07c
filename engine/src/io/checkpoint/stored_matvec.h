#pragma once
// Products with a weight matrix as the file stores it (StoredMatrix: quantized GGUF blocks, BF16,
// F16 or F32 rows in the mapping): each row dequantized into a buffer the size of one row, then
// dotted with the vectors — the matrix is never converted whole, which is what lets generation
// run a quantized model one token at a time in little more memory than its file.

#include <attnscope/model_checkpoint.h>

#include <cstdint>

namespace attnscope::engine {

/// y[c, r] = Σ_j M[r, j] · x[c, j] for `count` vectors x [count, cols] → y [count, rows]; rows
/// shared among the kernel threads, each row dequantized once for all the vectors. llama.cpp's q/k
/// row order (permuteHeads) is undone on y.
void storedMatMul(const StoredMatrix& m, const float* x, std::int64_t count, float* y);

/// The dot product of n floats (AVX2 where the CPU has it).
float dotProduct(const float* a, const float* b, std::int64_t n);

}  // namespace attnscope::engine
