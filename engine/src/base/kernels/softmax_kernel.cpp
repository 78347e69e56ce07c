#include "base/kernels/softmax_kernel.h"

#include "base/kernels/row_exp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnscope::engine {
namespace {

// exp(x) for x <= 0 (softmax arguments after the max shift), vectorisable by the compiler.
// Cody-Waite range reduction and a degree-6 polynomial (Cephes expf): about 1 ulp on [-87, 0],
// and exact enough for the small positive arguments of a shift by an earlier maximum.
// Arguments below -87.3 (including -inf) give exactly 0, which is what masked keys need; above
// 88 +inf, and a NaN stays NaN. The reduction only ever sees [-87.3, 88], so the float-to-int
// conversion of the exponent is defined for every input (a NaN or +inf there was undefined).
inline float expNonPositive(float x) {
    const float xc = x >= -87.3f ? (x <= 88.0f ? x : 88.0f) : -87.3f;
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
    // (one expression of selects, which the compiler vectorises; the last x is a NaN)
    return x < -87.3f ? 0.0f : x <= 88.0f ? p * twoToN : x > 88.0f ? std::numeric_limits<float>::infinity() : x;
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

void keptWeightsInPlace(float* data, std::int64_t count, float scale, float shift, float factor) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) return keptWeightsAvx2(data, count, scale, shift, factor);
#endif
    for (std::int64_t j = 0; j < count; ++j)
        data[j] = expNonPositive(std::min(data[j] * scale - shift, kMaxReferenceExcess)) * factor;
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
    for (std::int64_t r = 0; r < rows; ++r)
        rowSum[r] = rowExp(data + r * rowStride, cols, scale, rowMax + r, kNoReference);
}

float expRowAgainst(float* row, std::int64_t cols, float scale, float reference, float* shiftMax) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) return rowExpAvx2(row, cols, scale, shiftMax, /*normalise=*/false, reference);
#endif
    return rowExp(row, cols, scale, shiftMax, reference);
}

std::int64_t softmaxRowsInPlace(float* data, std::int64_t rows, std::int64_t cols, std::int64_t rowStride,
                                float scale, std::uint8_t* rowEmpty, float* rowShift, float* rowSum) {
    float* rowLse = rowShift;  // (asked for: the shift, and then the sum)
    std::int64_t empty = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        float* row = data + r * rowStride;
        float mx = -std::numeric_limits<float>::infinity();
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
        float sum;
        if (haveAvx2Fma()) {
            sum = rowExpAvx2(row, cols, scale, &mx, /*normalise=*/true, kNoReference);
        } else {
            if (rowLse) mx = maxOfLanes(row, cols);
            sum = rowSoftmax(row, cols, scale);
        }
#else
        if (rowLse) mx = maxOfLanes(row, cols);
        const float sum = rowSoftmax(row, cols, scale);
#endif
        if (sum == 0.0f) {
            std::memset(row, 0, static_cast<std::size_t>(cols) * sizeof(float));
            if (rowEmpty) rowEmpty[r] = 1;
            ++empty;
            if (rowLse) {
                rowShift[r] = -std::numeric_limits<float>::infinity();
                rowSum[r] = 0.0f;
            }
        } else if (rowLse) {
            rowShift[r] = mx * scale;
            rowSum[r] = sum;
        }
    }
    return empty;
}

}  // namespace attnscope::engine
