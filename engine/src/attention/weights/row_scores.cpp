#include "attention/weights/row_scores.h"

#include "base/kernels/cpu_features.h"

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace attnscope::engine {
namespace {

// Four independent sums: the loop is latency-bound on one accumulator.
inline float dotPortable(const float* a, const float* b, std::int64_t d) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    std::int64_t c = 0;
    for (; c + 4 <= d; c += 4) {
        s0 += a[c] * b[c];
        s1 += a[c + 1] * b[c + 1];
        s2 += a[c + 2] * b[c + 2];
        s3 += a[c + 3] * b[c + 3];
    }
    for (; c < d; ++c) s0 += a[c] * b[c];
    return (s0 + s1) + (s2 + s3);
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
ATTNSCOPE_AVX2_FMA_TARGET inline float hsum(__m256 v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// d % 8 == 0: eight lanes, two accumulators.
ATTNSCOPE_AVX2_FMA_TARGET float dotAvx2(const float* a, const float* b, std::int64_t d) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    std::int64_t c = 0;
    for (; c + 16 <= d; c += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + c), _mm256_loadu_ps(b + c), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + c + 8), _mm256_loadu_ps(b + c + 8), s1);
    }
    if (c < d) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + c), _mm256_loadu_ps(b + c), s0);
    return hsum(_mm256_add_ps(s0, s1));
}
#endif

template <class KeyAt>
void dotMany(const float* q, const float* k, std::int64_t d, std::int64_t count, float* out, KeyAt keyAt) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    static const bool avx2 = haveAvx2Fma();
    if (avx2 && d % 8 == 0) {
        for (std::int64_t t = 0; t < count; ++t) out[t] = dotAvx2(q, k + keyAt(t) * d, d);
        return;
    }
#endif
    for (std::int64_t t = 0; t < count; ++t) out[t] = dotPortable(q, k + keyAt(t) * d, d);
}

}  // namespace

void dotKeys(const float* q, const float* k, std::int64_t d, const std::int32_t* keys, std::int64_t count, float* out) {
    dotMany(q, k, d, count, out, [keys](std::int64_t t) { return static_cast<std::int64_t>(keys[t]); });
}

void dotRange(const float* q, const float* k, std::int64_t d, std::int64_t j0, std::int64_t count, float* out) {
    dotMany(q, k, d, count, out, [j0](std::int64_t t) { return j0 + t; });
}

}  // namespace attnscope::engine
