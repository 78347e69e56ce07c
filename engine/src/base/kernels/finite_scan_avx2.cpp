// firstNonFiniteChunk's AVX2 body (a file of its own: see exp_avx2.h).

#include "base/kernels/cpu_features.h"

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>

#include <algorithm>
#include <cstddef>

namespace attnscope::engine {

namespace {

// Lanes of p[0..8) whose exponent bits are all ones (NaN or infinite).
ATTNSCOPE_AVX2_FMA_TARGET inline __attribute__((always_inline)) __m256i nonFinite8(__m256i exponent, const float* p) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm256_cmpeq_epi32(_mm256_and_si256(x, exponent), exponent);
}

}  // namespace

// 32 values per step in four independent compares: the SSE2 loop the compiler makes of the
// portable version was a visible share of sparse_fixed's time at short lengths (PERFORMANCE.md).
ATTNSCOPE_AVX2_FMA_TARGET bool chunkHasNonFiniteAvx2(const float* values, std::size_t count) {
    const __m256i exponent = _mm256_set1_epi32(0x7f800000);
    __m256i bad0 = _mm256_setzero_si256(), bad1 = bad0, bad2 = bad0, bad3 = bad0;
    std::size_t i = 0;
    for (; i + 32 <= count; i += 32) {
        bad0 = _mm256_or_si256(bad0, nonFinite8(exponent, values + i));
        bad1 = _mm256_or_si256(bad1, nonFinite8(exponent, values + i + 8));
        bad2 = _mm256_or_si256(bad2, nonFinite8(exponent, values + i + 16));
        bad3 = _mm256_or_si256(bad3, nonFinite8(exponent, values + i + 24));
    }
    for (; i + 8 <= count; i += 8) bad0 = _mm256_or_si256(bad0, nonFinite8(exponent, values + i));
    const __m256i bad = _mm256_or_si256(_mm256_or_si256(bad0, bad1), _mm256_or_si256(bad2, bad3));
    bool found = !_mm256_testz_si256(bad, bad);
    for (; i < count && !found; ++i) {
        const float v = values[i];
        found = !(v - v == 0.0f);  // NaN and infinities give NaN
    }
    return found;
}

}  // namespace attnscope::engine
#endif
