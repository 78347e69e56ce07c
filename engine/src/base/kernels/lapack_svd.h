#pragma once
// Singular values through the system LAPACK (dgesdd), looked up at run time as the BLAS is
// (base/kernels/blas_gemm.h): LibTorch's when it is loaded, else liblapack.so.3 loaded on first use.

#include <cstdint>
#include <vector>

namespace attnscope::engine {

/// The singular values, largest first, of the row-major rows x cols matrix `a` (min(rows, cols)
/// of them). Empty when the system has no LAPACK or the routine did not converge.
std::vector<double> singularValues(const double* a, std::int64_t rows, std::int64_t cols);

}  // namespace attnscope::engine
