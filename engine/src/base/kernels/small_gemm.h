#pragma once
// Register-tiled single-precision products for the sparse kernels' small tiles (tens of rows,
// a few hundred keys, d of 32-128), read in place: no packing and no separate pass that zeroes C,
// which for these sizes cost the BLAS about a third of its time.

#include <cstdint>

namespace attnscope::engine {

/// C[m x n] = A[m x k] · B^T, B stored [n x k]; row-major with leading dimensions (beta = 0).
void smallGemmABt(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                  std::int64_t ldb, float* c, std::int64_t ldc);

/// C[m x n] = A[m x k] · B, B stored [k x n]; row-major with leading dimensions (beta = 0). The
/// register-tiled code takes any n (the last n % 8 columns through lane masks).
void smallGemmAB(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                 std::int64_t ldb, float* c, std::int64_t ldc);

/// dst[c, r] = src[r, c] for a [rows x cols] matrix (leading dimensions lds, ldd).
void transposeRows(std::int64_t rows, std::int64_t cols, const float* src, std::int64_t lds, float* dst,
                   std::int64_t ldd);

/// C[m x n] = A[m x k] · B, where column t of B is key first + t of a set of keys stored in panels
/// of 8: the panel of keys 8q..8q+7 is a [k x 8] row-major block at panels + q·8k (copyToPanels).
/// Only where smallGemmInPlace(k).
void smallGemmABPanels(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                       const float* panels, std::int64_t first, float* c, std::int64_t ldc);

/// Copies rows [rows x k] (leading dimension lds) into panels of 8 rows, each transposed to [k x 8]
/// (ceil(rows / 8) · 8k floats; the last panel's missing rows are zeros).
/// nonFinite (when not null): set when a copied value is NaN or infinite (tested on the vectors the
/// transpose loads, instead of a separate read of the rows).
void copyToPanels(std::int64_t rows, std::int64_t k, const float* src, std::int64_t lds, float* panels,
                  bool* nonFinite = nullptr);

/// Whether products with this inner size (A·B^T) and output width (A·B) run in the register-tiled
/// code (and smallGemmABPanels is available).
bool smallGemmInPlace(std::int64_t d);

/// C[m x n] += A[m x k] · B (any n); register-tiled where the CPU has AVX2/FMA, a plain loop
/// otherwise.
void smallGemmABAdd(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda, const float* b,
                    std::int64_t ldb, float* c, std::int64_t ldc);

}  // namespace attnscope::engine
