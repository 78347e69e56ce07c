#pragma once
// The 8 x 8 float transpose in registers, shared by the AVX2 kernels (small_gemm.cpp,
// strided_keys_pass_avx2.cpp). Portable loops do best in files of their own (see exp_avx2.h).

#include "base/kernels/cpu_features.h"

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>

namespace attnscope::engine {

/// x[t] becomes column t of the 8 x 8 matrix whose rows were x[0..7]: pairs, quads, then halves.
ATTNSCOPE_AVX2_FMA_TARGET inline __attribute__((always_inline)) void transpose8x8(__m256 (&x)[8]) {
    const __m256 a0 = _mm256_unpacklo_ps(x[0], x[1]), a1 = _mm256_unpackhi_ps(x[0], x[1]);
    const __m256 a2 = _mm256_unpacklo_ps(x[2], x[3]), a3 = _mm256_unpackhi_ps(x[2], x[3]);
    const __m256 a4 = _mm256_unpacklo_ps(x[4], x[5]), a5 = _mm256_unpackhi_ps(x[4], x[5]);
    const __m256 a6 = _mm256_unpacklo_ps(x[6], x[7]), a7 = _mm256_unpackhi_ps(x[6], x[7]);
    const __m256 b0 = _mm256_shuffle_ps(a0, a2, 0x44), b1 = _mm256_shuffle_ps(a0, a2, 0xEE);
    const __m256 b2 = _mm256_shuffle_ps(a1, a3, 0x44), b3 = _mm256_shuffle_ps(a1, a3, 0xEE);
    const __m256 b4 = _mm256_shuffle_ps(a4, a6, 0x44), b5 = _mm256_shuffle_ps(a4, a6, 0xEE);
    const __m256 b6 = _mm256_shuffle_ps(a5, a7, 0x44), b7 = _mm256_shuffle_ps(a5, a7, 0xEE);
    x[0] = _mm256_permute2f128_ps(b0, b4, 0x20);
    x[1] = _mm256_permute2f128_ps(b1, b5, 0x20);
    x[2] = _mm256_permute2f128_ps(b2, b6, 0x20);
    x[3] = _mm256_permute2f128_ps(b3, b7, 0x20);
    x[4] = _mm256_permute2f128_ps(b0, b4, 0x31);
    x[5] = _mm256_permute2f128_ps(b1, b5, 0x31);
    x[6] = _mm256_permute2f128_ps(b2, b6, 0x31);
    x[7] = _mm256_permute2f128_ps(b3, b7, 0x31);
}

}  // namespace attnscope::engine
#endif
