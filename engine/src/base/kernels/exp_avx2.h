#pragma once
// exp on eight lanes, shared by the AVX2 kernels (row_exp_avx2.cpp, strided_keys_pass_avx2.cpp).
// Include only from files that hold AVX2 code alone: GCC stopped vectorising a file's portable
// loops once target-attributed functions sat beside them.

#include "base/kernels/cpu_features.h"

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>

#include <cstdint>

namespace attnscope::engine {

/// exp(x) on eight lanes: Cephes' range reduction and degree-5 polynomial (the portable
/// expNonPositive's). Lanes below −87.3 give exactly 0; exact to float rounding up to x ≈ 88.
ATTNSCOPE_AVX2_FMA_TARGET inline __attribute__((always_inline)) __m256 exp8(__m256 x) {
    const __m256 low = _mm256_set1_ps(-87.3f);
    const __m256 xc = _mm256_max_ps(x, low);
    const __m256 fx = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), xc);
    r = _mm256_fmadd_ps(fx, _mm256_set1_ps(2.12194440e-4f), r);
    const __m256 r2 = _mm256_mul_ps(r, r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0f));
    const __m256i n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
    const __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(n));
    return _mm256_andnot_ps(_mm256_cmp_ps(x, low, _CMP_LT_OQ), e);
}

/// Lanes [0, count) set, for the last count < 8 values of a row.
ATTNSCOPE_AVX2_FMA_TARGET inline __m256i tailMask(std::int64_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace attnscope::engine
#endif
