#pragma once
// C = A · Bᵀ for a few rows of A against many rows of B, computed so that equal rows of B give
// bit-identical columns of C wherever they sit. BLAS makes no such promise (OpenBLAS's SGEMM gave
// two equal routing vectors similarities one ulp apart, depending on the column), and the
// routing's top-w selection breaks exact ties by index, which needs equal values to be equal.

#include <cstdint>
#include <vector>

namespace attnscope::engine {

/// out[r · columns + j] = Σ_k a[r · depth + k] · b[j · depth + k], every column summed in the same
/// order (k ascending), blocks of columns on the kernels' threads.
void columnSimilarities(const float* a, std::int64_t rows, const float* b, std::int64_t columns, std::int64_t depth,
                        float* out);

/// The same, on the calling thread (for callers that already run one job per thread).
void columnSimilaritiesOnThisThread(const float* a, std::int64_t rows, const float* b, std::int64_t columns,
                                    std::int64_t depth, float* out);

}  // namespace attnscope::engine
