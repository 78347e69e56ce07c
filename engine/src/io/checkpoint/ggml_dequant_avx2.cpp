// AVX2 twins of the block formats GGUF files use most (Q8_0, and Q4_K and Q6_K of the Q4_K_M mix).
// Each multiplies and subtracts in the portable kernel's order, without fused multiply-adds, so
// both paths give the same floats bit for bit (the tests compare them so): the functions are
// compiled for AVX2 without FMA, so the compiler cannot fuse them either.

#include "base/kernels/cpu_features.h"

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include "io/checkpoint/half_float.h"

#include <immintrin.h>

#include <cstdint>

namespace attnscope::engine {

void ggmlScaleMinK4(int j, const std::uint8_t* q, std::uint8_t& scale, std::uint8_t& min);

#define ATTNSCOPE_AVX2_ONLY __attribute__((target("avx2")))

namespace {

ATTNSCOPE_AVX2_ONLY inline __m256i eightBytesU8(const std::uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// Q6_K's values: four low bits and two high bits, minus 32, as floats.
ATTNSCOPE_AVX2_ONLY inline __m256 sixBitValues(__m256i nibble, __m256i highBits) {
    const __m256i value = _mm256_or_si256(nibble, _mm256_slli_epi32(highBits, 4));
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(value, _mm256_set1_epi32(32)));
}

}  // namespace

ATTNSCOPE_AVX2_ONLY void dequantizeQ8_0Avx2(const std::uint8_t* src, std::int64_t blocks, float* out) {
    for (std::int64_t i = 0; i < blocks; ++i, src += 34, out += 32) {
        const __m256 d = _mm256_set1_ps(halfToFloat(loadU16(src)));
        for (int j = 0; j < 32; j += 8) {
            const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 2 + j)));
            _mm256_storeu_ps(out + j, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d));
        }
    }
}

ATTNSCOPE_AVX2_ONLY void dequantizeQ4_KAvx2(const std::uint8_t* src, std::int64_t blocks, float* out) {
    const __m256i low = _mm256_set1_epi32(0x0F);
    for (std::int64_t i = 0; i < blocks; ++i, src += 144) {
        const float d = halfToFloat(loadU16(src)), dmin = halfToFloat(loadU16(src + 2));
        const std::uint8_t* q = src + 16;
        for (int is = 0; is < 8; is += 2, q += 32, out += 64) {
            std::uint8_t sc, mn;
            ggmlScaleMinK4(is, src + 4, sc, mn);
            const __m256 d1 = _mm256_set1_ps(d * sc), m1 = _mm256_set1_ps(dmin * mn);
            ggmlScaleMinK4(is + 1, src + 4, sc, mn);
            const __m256 d2 = _mm256_set1_ps(d * sc), m2 = _mm256_set1_ps(dmin * mn);
            for (int l = 0; l < 32; l += 8) {
                const __m256i bytes = eightBytesU8(q + l);
                const __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(bytes, low));
                const __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(bytes, 4));
                _mm256_storeu_ps(out + l, _mm256_sub_ps(_mm256_mul_ps(d1, lo), m1));
                _mm256_storeu_ps(out + 32 + l, _mm256_sub_ps(_mm256_mul_ps(d2, hi), m2));
            }
        }
    }
}

ATTNSCOPE_AVX2_ONLY void dequantizeQ6_KAvx2(const std::uint8_t* src, std::int64_t blocks, float* out) {
    const __m256i low = _mm256_set1_epi32(0x0F), two = _mm256_set1_epi32(3);
    for (std::int64_t i = 0; i < blocks; ++i, src += 210) {
        const std::uint8_t* ql = src;
        const std::uint8_t* qh = src + 128;
        const auto* sc = reinterpret_cast<const std::int8_t*>(src + 192);
        const float d = halfToFloat(loadU16(src + 208));
        for (int n = 0; n < 256; n += 128, out += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; l += 8) {
                const int is = l / 16;
                const __m256i a = eightBytesU8(ql + l), b = eightBytesU8(ql + l + 32), h = eightBytesU8(qh + l);
                const __m256 q1 = sixBitValues(_mm256_and_si256(a, low), _mm256_and_si256(h, two));
                const __m256 q2 = sixBitValues(_mm256_and_si256(b, low), _mm256_and_si256(_mm256_srli_epi32(h, 2), two));
                const __m256 q3 = sixBitValues(_mm256_srli_epi32(a, 4), _mm256_and_si256(_mm256_srli_epi32(h, 4), two));
                const __m256 q4 = sixBitValues(_mm256_srli_epi32(b, 4), _mm256_srli_epi32(h, 6));
                _mm256_storeu_ps(out + l, _mm256_mul_ps(_mm256_set1_ps(d * static_cast<float>(sc[is])), q1));
                _mm256_storeu_ps(out + l + 32, _mm256_mul_ps(_mm256_set1_ps(d * static_cast<float>(sc[is + 2])), q2));
                _mm256_storeu_ps(out + l + 64, _mm256_mul_ps(_mm256_set1_ps(d * static_cast<float>(sc[is + 4])), q3));
                _mm256_storeu_ps(out + l + 96, _mm256_mul_ps(_mm256_set1_ps(d * static_cast<float>(sc[is + 6])), q4));
            }
        }
    }
}

}  // namespace attnscope::engine
#endif
