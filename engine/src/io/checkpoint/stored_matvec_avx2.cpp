// The dot product of generation's row-by-row products, eight lanes with fused multiply-adds.

#include "base/kernels/cpu_features.h"

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>

#include <cstdint>

namespace attnscope::engine {

ATTNSCOPE_AVX2_FMA_TARGET float dotProductAvx2(const float* a, const float* b, std::int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    const __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    const __m128 half = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
    float total = _mm_cvtss_f32(_mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1)));
    for (; i < n; ++i) total += a[i] * b[i];
    return total;
}

}  // namespace attnscope::engine
#endif

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include "io/checkpoint/half_float.h"

namespace attnscope::engine {

void ggmlScaleMinK4(int j, const std::uint8_t* q, std::uint8_t& scale, std::uint8_t& min);

namespace {

ATTNSCOPE_AVX2_FMA_TARGET inline __m256i eightBytes(const std::uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

ATTNSCOPE_AVX2_FMA_TARGET inline float horizontalSum(__m256 s) {
    const __m128 half = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
    return _mm_cvtss_f32(_mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1)));
}

}  // namespace

// Σ_j w_j x_j over a Q8_0 row: each block's d times Σ q x.
ATTNSCOPE_AVX2_FMA_TARGET float dotQ8_0Avx2(const std::uint8_t* row, const float* x, std::int64_t cols) {
    __m256 total = _mm256_setzero_ps();
    for (std::int64_t b = 0; b < cols / 32; ++b, row += 34, x += 32) {
        __m256 acc = _mm256_setzero_ps();
        for (int j = 0; j < 32; j += 8) {
            const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + 2 + j)));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), _mm256_loadu_ps(x + j), acc);
        }
        total = _mm256_fmadd_ps(acc, _mm256_set1_ps(halfToFloat(loadU16(row))), total);
    }
    return horizontalSum(total);
}

// A Q4_K row: per group of 32, d·scale·Σ nibble·x − dmin·min·Σx (`sums32`: x's sums per 32).
ATTNSCOPE_AVX2_FMA_TARGET float dotQ4_KAvx2(const std::uint8_t* row, const float* x, const float* sums32, std::int64_t cols) {
    const __m256i low = _mm256_set1_epi32(0x0F);
    __m256 total = _mm256_setzero_ps();
    float minus = 0;
    for (std::int64_t b = 0; b < cols / 256; ++b, row += 144, x += 256, sums32 += 8) {
        const float d = halfToFloat(loadU16(row)), dmin = halfToFloat(loadU16(row + 2));
        const std::uint8_t* q = row + 16;
        for (int is = 0; is < 8; is += 2, q += 32) {
            std::uint8_t sc1, m1, sc2, m2;
            ggmlScaleMinK4(is, row + 4, sc1, m1);
            ggmlScaleMinK4(is + 1, row + 4, sc2, m2);
            __m256 acc1 = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps();
            const float* xs = x + 32 * is;
            for (int l = 0; l < 32; l += 8) {
                const __m256i bytes = eightBytes(q + l);
                acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(bytes, low)), _mm256_loadu_ps(xs + l), acc1);
                acc2 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(bytes, 4)), _mm256_loadu_ps(xs + 32 + l), acc2);
            }
            total = _mm256_fmadd_ps(acc1, _mm256_set1_ps(d * sc1), total);
            total = _mm256_fmadd_ps(acc2, _mm256_set1_ps(d * sc2), total);
            minus += dmin * m1 * sums32[is] + dmin * m2 * sums32[is + 1];
        }
    }
    return horizontalSum(total) - minus;
}

// A Q6_K row: per group of 16, d·scale·(Σ q·x − 32·Σx), q the stored 6 bits (`sums16`: x's sums per 16).
ATTNSCOPE_AVX2_FMA_TARGET float dotQ6_KAvx2(const std::uint8_t* row, const float* x, const float* sums16, std::int64_t cols) {
    const __m256i low = _mm256_set1_epi32(0x0F), two = _mm256_set1_epi32(3);
    __m256 total = _mm256_setzero_ps();
    float minus = 0;
    for (std::int64_t b = 0; b < cols / 256; ++b, row += 210, x += 256, sums16 += 16) {
        const std::uint8_t* ql = row;
        const std::uint8_t* qh = row + 128;
        const auto* sc = reinterpret_cast<const std::int8_t*>(row + 192);
        const float d = halfToFloat(loadU16(row + 208));
        for (int g = 0; g < 16; ++g) minus += 32.0f * d * static_cast<float>(sc[g]) * sums16[g];
        for (int n = 0; n < 256; n += 128, ql += 64, qh += 32) {
            const float* xs = x + n;
            const std::int8_t* s = sc + n / 16;
            for (int l = 0; l < 32; l += 8) {
                const int is = l / 16;
                const __m256i a = eightBytes(ql + l), c = eightBytes(ql + l + 32), h = eightBytes(qh + l);
                const __m256 q1 = _mm256_cvtepi32_ps(_mm256_or_si256(_mm256_and_si256(a, low), _mm256_slli_epi32(_mm256_and_si256(h, two), 4)));
                const __m256 q2 = _mm256_cvtepi32_ps(_mm256_or_si256(_mm256_and_si256(c, low),
                                                                     _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(h, 2), two), 4)));
                const __m256 q3 = _mm256_cvtepi32_ps(_mm256_or_si256(_mm256_srli_epi32(a, 4),
                                                                     _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(h, 4), two), 4)));
                const __m256 q4 = _mm256_cvtepi32_ps(_mm256_or_si256(_mm256_srli_epi32(c, 4), _mm256_slli_epi32(_mm256_srli_epi32(h, 6), 4)));
                total = _mm256_fmadd_ps(_mm256_mul_ps(q1, _mm256_loadu_ps(xs + l)), _mm256_set1_ps(d * s[is]), total);
                total = _mm256_fmadd_ps(_mm256_mul_ps(q2, _mm256_loadu_ps(xs + l + 32)), _mm256_set1_ps(d * s[is + 2]), total);
                total = _mm256_fmadd_ps(_mm256_mul_ps(q3, _mm256_loadu_ps(xs + l + 64)), _mm256_set1_ps(d * s[is + 4]), total);
                total = _mm256_fmadd_ps(_mm256_mul_ps(q4, _mm256_loadu_ps(xs + l + 96)), _mm256_set1_ps(d * s[is + 6]), total);
            }
        }
    }
    return horizontalSum(total) - minus;
}

}  // namespace attnscope::engine
#endif
