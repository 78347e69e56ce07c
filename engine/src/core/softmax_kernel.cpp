#include "core/softmax_kernel.h"

#include "core/cpu_features.h"

#include <cmath>
#include <cstring>
#include <limits>

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace attnscope::engine {
namespace {

// exp(x) for x <= 0 (softmax arguments after the max shift), vectorisable by the compiler.
// Cody-Waite range reduction and a degree-6 polynomial (Cephes expf): about 1 ulp on [-87, 0].
// Arguments below -87.3 (including -inf) give exactly 0, which is what masked keys need.
inline float expNonPositive(float x) {
    const float xc = x < -87.3f ? -87.3f : x;
    // Round to nearest with the 1.5 * 2^23 trick: vectorises without SSE4.1's roundps.
    const float fx = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - fx * 0.693359375f;
    r = r + fx * 2.12194440e-4f;
    const float r2 = r * r;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r2 + r + 1.0f;
    // NOTE: __builtin_bit_cast, unlike memcpy, keeps this loop vectorisable with GCC 12.
    const float twoToN = __builtin_bit_cast(float, (static_cast<std::int32_t>(fx) + 127) * (1 << 23));
    return x < -87.3f ? 0.0f : p * twoToN;
}

// The shift of a row's exp: an earlier part's max (`reference`, unscaled) when the row's values
// then stay below exp(kMaxReferenceExcess), else the row's own max. Softmax is invariant under the
// shift and float's relative precision does not depend on magnitude, so either is exact; the
// reference lets a second part of a row add into the first part's output without rescaling it.
constexpr float kMaxReferenceExcess = 64.0f;
constexpr float kNoReference = -std::numeric_limits<float>::infinity();

inline float referenceShift(float maxValue, float scale, float reference) {
    return reference != -std::numeric_limits<float>::infinity() && (maxValue - reference) * scale <= kMaxReferenceExcess
               ? reference
               : maxValue;
}

constexpr int kLanes = 16;

// The largest of row[0..cols), over kLanes lanes so that the loop vectorises; inlined into each
// target clone of its callers.
inline __attribute__((always_inline)) float laneMax(const float* row, std::int64_t cols) {
    float lanes[kLanes];
    for (float& l : lanes) l = -std::numeric_limits<float>::infinity();
    const std::int64_t body = cols - cols % kLanes;
    for (std::int64_t j = 0; j < body; j += kLanes)
        for (int l = 0; l < kLanes; ++l) lanes[l] = row[j + l] > lanes[l] ? row[j + l] : lanes[l];
    float best = -std::numeric_limits<float>::infinity();
    for (float l : lanes) best = l > best ? l : best;
    for (std::int64_t j = body; j < cols; ++j) best = row[j] > best ? row[j] : best;
    return best;
}

// The sum of row[0..cols) over kLanes lanes (GCC does not reassociate a single float sum).
inline __attribute__((always_inline)) float laneSum(const float* row, std::int64_t cols) {
    float lanes[kLanes] = {};
    const std::int64_t body = cols - cols % kLanes;
    for (std::int64_t j = 0; j < body; j += kLanes)
        for (int l = 0; l < kLanes; ++l) lanes[l] += row[j + l];
    float sum = 0.0f;
    for (float l : lanes) sum += l;
    for (std::int64_t j = body; j < cols; ++j) sum += row[j];
    return sum;
}

// Separate simple loops so that each one vectorises (max, exp, sum, scale); reductions use
// explicit lanes because GCC does not reassociate float sums without -ffast-math.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
float rowSoftmax(float* row, std::int64_t cols, float scale) {
    const float maxValue = laneMax(row, cols);
    if (maxValue == -std::numeric_limits<float>::infinity()) return 0.0f;

    const float shift = maxValue * scale;
    for (std::int64_t j = 0; j < cols; ++j) row[j] = expNonPositive(row[j] * scale - shift);
    const float sum = laneSum(row, cols);

    const float inv = 1.0f / sum;
    for (std::int64_t j = 0; j < cols; ++j) row[j] *= inv;
    return sum;
}

// exp(scale·s − scale·max) in place without the normalisation; returns the sum, *rowMax = max
// (raw, unscaled). An all −inf row becomes zeros with sum 0 and max −inf.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
float rowExp(float* row, std::int64_t cols, float scale, float* rowMax, float reference) {
    const float maxValue = laneMax(row, cols);
    if (maxValue == -std::numeric_limits<float>::infinity()) {
        *rowMax = maxValue;
        std::memset(row, 0, static_cast<std::size_t>(cols) * sizeof(float));
        return 0.0f;
    }
    *rowMax = referenceShift(maxValue, scale, reference);
    const float shift = *rowMax * scale;
    for (std::int64_t j = 0; j < cols; ++j) row[j] = expNonPositive(row[j] * scale - shift);
    const float sum = laneSum(row, cols);
    return sum;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void featureRow(float* row, std::int64_t cols, float shift, float eps, float ratio) {
    for (std::int64_t j = 0; j < cols; ++j) row[j] = (expNonPositive(row[j] - shift) + eps) * ratio;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
float maxOfLanes(const float* data, std::int64_t count) { return laneMax(data, count); }

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void eluPlusOne(float* data, std::int64_t count) {
    for (std::int64_t j = 0; j < count; ++j) {
        const float x = data[j];
        const float e = expNonPositive(x < 0.0f ? x : 0.0f);
        data[j] = x > 0.0f ? x + 1.0f : e;
    }
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
// expNonPositive on eight lanes: the same reduction and polynomial. The sparse kernels' rows are
// short (a strided row holds a few dozen scores, a band row 129): the compiler's loops spent a
// third of their time in scalar remainders and a separate pass for the sum; these rows run in
// vectors with a masked tail and the sum accumulated as the values are written.
ATTNSCOPE_AVX2_FMA_TARGET inline __attribute__((always_inline)) __m256 expNonPositive8(__m256 x) {
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

// Lanes [0, count) set, for a row's last count < 8 values.
ATTNSCOPE_AVX2_FMA_TARGET inline __m256i tailMask(std::int64_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

ATTNSCOPE_AVX2_FMA_TARGET inline float horizontalMax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
}

ATTNSCOPE_AVX2_FMA_TARGET inline float horizontalSum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

ATTNSCOPE_AVX2_FMA_TARGET void expNonPositiveAvx2(float* data, std::int64_t count) {
    std::int64_t j = 0;
    for (; j + 8 <= count; j += 8) _mm256_storeu_ps(data + j, expNonPositive8(_mm256_loadu_ps(data + j)));
    if (j < count) {
        const __m256i mask = tailMask(count - j);
        _mm256_maskstore_ps(data + j, mask, expNonPositive8(_mm256_maskload_ps(data + j, mask)));
    }
}

// rowExp (normalise = false) or rowSoftmax (true, and then *rowMax is not needed) in AVX2.
ATTNSCOPE_AVX2_FMA_TARGET float rowExpAvx2(float* row, std::int64_t cols, float scale, float* rowMax, bool normalise,
                                           float reference) {
    const __m256 minusInf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    __m256 m0 = minusInf, m1 = minusInf;
    std::int64_t j = 0;
    for (; j + 16 <= cols; j += 16) {
        m0 = _mm256_max_ps(m0, _mm256_loadu_ps(row + j));
        m1 = _mm256_max_ps(m1, _mm256_loadu_ps(row + j + 8));
    }
    if (j + 8 <= cols) {
        m0 = _mm256_max_ps(m0, _mm256_loadu_ps(row + j));
        j += 8;
    }
    const std::int64_t body = j, tail = cols - body;
    const __m256i mask = tailMask(tail);
    if (tail > 0)
        m1 = _mm256_max_ps(m1, _mm256_blendv_ps(minusInf, _mm256_maskload_ps(row + body, mask), _mm256_castsi256_ps(mask)));
    float maxValue = horizontalMax(_mm256_max_ps(m0, m1));
    if (maxValue == -std::numeric_limits<float>::infinity()) {
        if (rowMax) *rowMax = maxValue;
        std::memset(row, 0, static_cast<std::size_t>(cols) * sizeof(float));
        return 0.0f;
    }
    maxValue = referenceShift(maxValue, scale, reference);
    if (rowMax) *rowMax = maxValue;
    const __m256 vscale = _mm256_set1_ps(scale), vshift = _mm256_set1_ps(maxValue * scale);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    j = 0;
    for (; j + 16 <= body; j += 16) {
        const __m256 e0 = expNonPositive8(_mm256_fmsub_ps(_mm256_loadu_ps(row + j), vscale, vshift));
        const __m256 e1 = expNonPositive8(_mm256_fmsub_ps(_mm256_loadu_ps(row + j + 8), vscale, vshift));
        _mm256_storeu_ps(row + j, e0);
        _mm256_storeu_ps(row + j + 8, e1);
        s0 = _mm256_add_ps(s0, e0);
        s1 = _mm256_add_ps(s1, e1);
    }
    if (j < body) {
        const __m256 e = expNonPositive8(_mm256_fmsub_ps(_mm256_loadu_ps(row + j), vscale, vshift));
        _mm256_storeu_ps(row + j, e);
        s0 = _mm256_add_ps(s0, e);
    }
    if (tail > 0) {
        const __m256 x = _mm256_maskload_ps(row + body, mask);
        const __m256 e = _mm256_and_ps(expNonPositive8(_mm256_fmsub_ps(x, vscale, vshift)), _mm256_castsi256_ps(mask));
        _mm256_maskstore_ps(row + body, mask, e);
        s1 = _mm256_add_ps(s1, e);
    }
    const float sum = horizontalSum(_mm256_add_ps(s0, s1));
    if (normalise) {
        const __m256 inv = _mm256_set1_ps(1.0f / sum);
        for (j = 0; j < body; j += 8) _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inv));
        if (tail > 0) _mm256_maskstore_ps(row + body, mask, _mm256_mul_ps(_mm256_maskload_ps(row + body, mask), inv));
    }
    return sum;
}
#endif

}  // namespace

void eluPlusOneInPlace(float* data, std::int64_t count) { eluPlusOne(data, count); }

void positiveFeaturesInPlace(float* data, std::int64_t rows, std::int64_t cols, const float* shift, float eps,
                             float ratio) {
    for (std::int64_t r = 0; r < rows; ++r) featureRow(data + r * cols, cols, shift[r], eps, ratio);
}

float maxValue(const float* data, std::int64_t count) { return maxOfLanes(data, count); }

void expNonPositiveInPlace(float* data, std::int64_t count) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) return expNonPositiveAvx2(data, count);
#endif
    for (std::int64_t j = 0; j < count; ++j) data[j] = expNonPositive(data[j]);
}

void expRowsInPlace(float* data, std::int64_t rows, std::int64_t cols, std::int64_t rowStride, float scale,
                    float* rowMax, float* rowSum) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) {
        for (std::int64_t r = 0; r < rows; ++r)
            rowSum[r] = rowExpAvx2(data + r * rowStride, cols, scale, rowMax + r, /*normalise=*/false, kNoReference);
        return;
    }
#endif
    for (std::int64_t r = 0; r < rows; ++r) rowSum[r] = rowExp(data + r * rowStride, cols, scale, rowMax + r, kNoReference);
}

float expRowAgainst(float* row, std::int64_t cols, float scale, float reference, float* shiftMax) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) return rowExpAvx2(row, cols, scale, shiftMax, /*normalise=*/false, reference);
#endif
    return rowExp(row, cols, scale, shiftMax, reference);
}

std::int64_t softmaxRowsInPlace(float* data, std::int64_t rows, std::int64_t cols, std::int64_t rowStride,
                                float scale, std::uint8_t* rowEmpty) {
    std::int64_t empty = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        float* row = data + r * rowStride;
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
        const float sum = haveAvx2Fma() ? rowExpAvx2(row, cols, scale, nullptr, /*normalise=*/true, kNoReference)
                                        : rowSoftmax(row, cols, scale);
#else
        const float sum = rowSoftmax(row, cols, scale);
#endif
        if (sum == 0.0f) {
            std::memset(row, 0, static_cast<std::size_t>(cols) * sizeof(float));
            if (rowEmpty) rowEmpty[r] = 1;
            ++empty;
        }
    }
    return empty;
}

}  // namespace attnscope::engine
