#pragma once
// Register-tiled single-precision products for the sparse kernels' small tiles (tens of rows,
// a few hundred keys, d of 32-128), read in place: no packing and no separate pass that zeroes C,
// which for these sizes cost the BLAS about a third of its time.

#include <cstdint>

namespace attnscope::engine {

/// C[m x n] = A[m x k] · B^T, B stored [n x k]; row-major with leading dimensions (beta = 0).
void smallGemmABt(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                  std::int64_t ldb, float* c, std::int64_t ldc);

/// C[m x n] = A[m x k] · B, B stored [k x n]; row-major with leading dimensions (beta = 0).
void smallGemmAB(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                 std::int64_t ldb, float* c, std::int64_t ldc);

/// Whether products with this inner size (A·B^T) and output width (A·B) run in the register-tiled
/// code, which alone offers accumulation (smallGemmABAdd).
bool smallGemmInPlace(std::int64_t d);

/// C[m x n] += A[m x k] · B; only where smallGemmInPlace(n).
void smallGemmABAdd(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                    std::int64_t ldb, float* c, std::int64_t ldc);

}  // namespace attnscope::engine
