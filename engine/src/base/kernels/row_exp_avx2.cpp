#include "base/kernels/row_exp.h"

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include "base/kernels/exp_avx2.h"

#include <cstring>

namespace attnscope::engine {
namespace {

// The sparse kernels' rows are short (a strided row holds a few dozen scores, a band row 129):
// the compiler's loops spent a third of their time in scalar remainders and a separate pass for
// the sum; these rows run in vectors (exp8) with a masked tail and the sum accumulated as the
// values are written.

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

}  // namespace

ATTNSCOPE_AVX2_FMA_TARGET void expNonPositiveAvx2(float* data, std::int64_t count) {
    std::int64_t j = 0;
    for (; j + 8 <= count; j += 8) _mm256_storeu_ps(data + j, exp8(_mm256_loadu_ps(data + j)));
    if (j < count) {
        const __m256i mask = tailMask(count - j);
        _mm256_maskstore_ps(data + j, mask, exp8(_mm256_maskload_ps(data + j, mask)));
    }
}

namespace {
// exp(min(scale·x − shift, kMaxReferenceExcess)) · factor on eight lanes.
ATTNSCOPE_AVX2_FMA_TARGET inline __m256 keptWeights8(__m256 x, __m256 scale, __m256 shift, __m256 factor) {
    return _mm256_mul_ps(exp8(_mm256_min_ps(_mm256_fmsub_ps(x, scale, shift), _mm256_set1_ps(kMaxReferenceExcess))), factor);
}
}  // namespace

ATTNSCOPE_AVX2_FMA_TARGET void keptWeightsAvx2(float* data, std::int64_t count, float scale, float shift, float factor) {
    const __m256 vs = _mm256_set1_ps(scale), vshift = _mm256_set1_ps(shift), vf = _mm256_set1_ps(factor);
    std::int64_t j = 0;
    for (; j + 8 <= count; j += 8) _mm256_storeu_ps(data + j, keptWeights8(_mm256_loadu_ps(data + j), vs, vshift, vf));
    if (j < count) {
        const __m256i mask = tailMask(count - j);
        _mm256_maskstore_ps(data + j, mask, keptWeights8(_mm256_maskload_ps(data + j, mask), vs, vshift, vf));
    }
}

// The softmax kernel's rowExp (normalise = false) or rowSoftmax (normalise = true) in AVX2.
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
        m1 = _mm256_max_ps(m1,
                           _mm256_blendv_ps(minusInf, _mm256_maskload_ps(row + body, mask), _mm256_castsi256_ps(mask)));
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
        const __m256 e0 = exp8(_mm256_fmsub_ps(_mm256_loadu_ps(row + j), vscale, vshift));
        const __m256 e1 = exp8(_mm256_fmsub_ps(_mm256_loadu_ps(row + j + 8), vscale, vshift));
        _mm256_storeu_ps(row + j, e0);
        _mm256_storeu_ps(row + j + 8, e1);
        s0 = _mm256_add_ps(s0, e0);
        s1 = _mm256_add_ps(s1, e1);
    }
    if (j < body) {
        const __m256 e = exp8(_mm256_fmsub_ps(_mm256_loadu_ps(row + j), vscale, vshift));
        _mm256_storeu_ps(row + j, e);
        s0 = _mm256_add_ps(s0, e);
    }
    if (tail > 0) {
        const __m256 x = _mm256_maskload_ps(row + body, mask);
        const __m256 e = _mm256_and_ps(exp8(_mm256_fmsub_ps(x, vscale, vshift)), _mm256_castsi256_ps(mask));
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

}  // namespace attnscope::engine
#endif
