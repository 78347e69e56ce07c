#include "base/kernels/row_argmax.h"

#include "base/kernels/cpu_features.h"

#include <limits>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define ATTNSCOPE_ARGMAX_AVX2 1
#endif

namespace attnscope::engine {
namespace {

// The lanes' (maximum, first column) pairs reduced to the largest value at the smallest column,
// then the tail columns.
std::int64_t finish(const float* lanes, const std::int32_t* where, int laneCount, const float* row,
                    std::int64_t body, std::int64_t cols) {
    float top = -std::numeric_limits<float>::infinity();
    std::int64_t arg = 0;
    if (body > 0)
        for (int l = 0; l < laneCount; ++l)
            if (lanes[l] > top || (lanes[l] == top && where[l] < arg)) {
                top = lanes[l];
                arg = where[l];
            }
    for (std::int64_t c = body; c < cols; ++c)
        if (row[c] > top) {
            top = row[c];
            arg = c;
        }
    return arg;
}

std::int64_t firstMaxIndexScalar(const float* row, std::int64_t cols) {
    return finish(nullptr, nullptr, 0, row, 0, cols);
}

#ifdef ATTNSCOPE_ARGMAX_AVX2
// Eight lanes, each keeping its running maximum and the first column holding it (strict >):
// GCC leaves the equivalent plain loop scalar and branchy (a float and an int select per column).
__attribute__((target("avx2"))) std::int64_t firstMaxIndexAvx2(const float* row, std::int64_t cols) {
    const std::int64_t body = cols - cols % 8;
    __m256 best = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    __m256i bestAt = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i at = bestAt;
    const __m256i step = _mm256_set1_epi32(8);
    for (std::int64_t c = 0; c < body; c += 8) {
        const __m256 v = _mm256_loadu_ps(row + c);
        const __m256 better = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
        best = _mm256_blendv_ps(best, v, better);
        bestAt = _mm256_blendv_epi8(bestAt, at, _mm256_castps_si256(better));
        at = _mm256_add_epi32(at, step);
    }
    alignas(32) float lanes[8];
    alignas(32) std::int32_t where[8];
    _mm256_store_ps(lanes, best);
    _mm256_store_si256(reinterpret_cast<__m256i*>(where), bestAt);
    return finish(lanes, where, 8, row, body, cols);
}

// Row by row, eight columns at a time: a strictly larger value takes the column over.
__attribute__((target("avx2"))) void firstMaxRowPerColumnAvx2(const float* m, std::int64_t rows, std::int64_t cols,
                                                               std::int64_t ld, float* best, std::int32_t* where) {
    const std::int64_t body = cols - cols % 8;
    for (std::int64_t r = 1; r < rows; ++r) {
        const float* row = m + r * ld;
        const __m256i rowIndex = _mm256_set1_epi32(static_cast<std::int32_t>(r));
        for (std::int64_t t = 0; t < body; t += 8) {
            const __m256 v = _mm256_loadu_ps(row + t);
            const __m256 b = _mm256_loadu_ps(best + t);
            const __m256 better = _mm256_cmp_ps(v, b, _CMP_GT_OQ);
            _mm256_storeu_ps(best + t, _mm256_blendv_ps(b, v, better));
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(where + t));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(where + t),
                                _mm256_blendv_epi8(w, rowIndex, _mm256_castps_si256(better)));
        }
        for (std::int64_t t = body; t < cols; ++t)
            if (row[t] > best[t]) {
                best[t] = row[t];
                where[t] = static_cast<std::int32_t>(r);
            }
    }
}
#endif

void firstMaxAndMinScalar(const float* row, std::int64_t cols, std::int64_t& maxAt, std::int64_t& minAt) {
    maxAt = minAt = 0;
    for (std::int64_t c = 1; c < cols; ++c) {
        if (row[c] > row[maxAt]) maxAt = c;
        if (row[c] < row[minAt]) minAt = c;
    }
}

#ifdef ATTNSCOPE_ARGMAX_AVX2
// As firstMaxIndexAvx2, with a second set of lanes for the minimum (strict <).
__attribute__((target("avx2"))) void firstMaxAndMinAvx2(const float* row, std::int64_t cols, std::int64_t& maxAt,
                                                        std::int64_t& minAt) {
    const std::int64_t body = cols - cols % 8;
    __m256 hi = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    __m256 lo = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    __m256i hiAt = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), loAt = hiAt, at = hiAt;
    const __m256i step = _mm256_set1_epi32(8);
    for (std::int64_t c = 0; c < body; c += 8) {
        const __m256 v = _mm256_loadu_ps(row + c);
        const __m256 above = _mm256_cmp_ps(v, hi, _CMP_GT_OQ), below = _mm256_cmp_ps(v, lo, _CMP_LT_OQ);
        hi = _mm256_blendv_ps(hi, v, above);
        lo = _mm256_blendv_ps(lo, v, below);
        hiAt = _mm256_blendv_epi8(hiAt, at, _mm256_castps_si256(above));
        loAt = _mm256_blendv_epi8(loAt, at, _mm256_castps_si256(below));
        at = _mm256_add_epi32(at, step);
    }
    alignas(32) float his[8], los[8];
    alignas(32) std::int32_t hiWhere[8], loWhere[8];
    _mm256_store_ps(his, hi);
    _mm256_store_ps(los, lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(hiWhere), hiAt);
    _mm256_store_si256(reinterpret_cast<__m256i*>(loWhere), loAt);
    maxAt = finish(his, hiWhere, 8, row, body, cols);
    // the minimum: the same reduction on negated lanes and tail
    float top = std::numeric_limits<float>::infinity();
    std::int64_t arg = 0;
    if (body > 0)
        for (int l = 0; l < 8; ++l)
            if (los[l] < top || (los[l] == top && loWhere[l] < arg)) {
                top = los[l];
                arg = loWhere[l];
            }
    for (std::int64_t c = body; c < cols; ++c)
        if (row[c] < top) {
            top = row[c];
            arg = c;
        }
    minAt = arg;
}
#endif

void firstMaxRowPerColumnScalar(const float* m, std::int64_t rows, std::int64_t cols, std::int64_t ld, float* best,
                                std::int32_t* where) {
    for (std::int64_t r = 1; r < rows; ++r)
        for (std::int64_t t = 0; t < cols; ++t)
            if (m[r * ld + t] > best[t]) {
                best[t] = m[r * ld + t];
                where[t] = static_cast<std::int32_t>(r);
            }
}

}  // namespace

void firstMaxRowPerColumn(const float* m, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          std::vector<float>& best, std::vector<std::int32_t>& where) {
    best.assign(m, m + cols);
    where.assign(static_cast<std::size_t>(cols), 0);
#ifdef ATTNSCOPE_ARGMAX_AVX2
    static const bool avx2 = haveAvx2Fma();
    if (avx2) return firstMaxRowPerColumnAvx2(m, rows, cols, ld, best.data(), where.data());
#endif
    firstMaxRowPerColumnScalar(m, rows, cols, ld, best.data(), where.data());
}

void firstMaxAndMinIndex(const float* row, std::int64_t cols, std::int64_t& maxAt, std::int64_t& minAt) {
#ifdef ATTNSCOPE_ARGMAX_AVX2
    static const bool avx2 = haveAvx2Fma();
    if (avx2) return firstMaxAndMinAvx2(row, cols, maxAt, minAt);
#endif
    firstMaxAndMinScalar(row, cols, maxAt, minAt);
}

std::int64_t firstMaxIndex(const float* row, std::int64_t cols) {
#ifdef ATTNSCOPE_ARGMAX_AVX2
    static const bool avx2 = haveAvx2Fma();
    if (avx2) return firstMaxIndexAvx2(row, cols);
#endif
    return firstMaxIndexScalar(row, cols);
}

}  // namespace attnscope::engine
