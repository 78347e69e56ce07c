#include "base/kernels/top_select.h"

#include "base/kernels/cpu_features.h"

#include <algorithm>
#include <functional>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define ATTNSCOPE_SELECT_AVX2 1
#endif

namespace attnscope::engine {
namespace {

// Sample one value in kSampleStride; below kMinSampledRatio · w values a full ranking is cheap.
constexpr std::int64_t kSampleStride = 16;
constexpr std::int64_t kMinSampledRatio = 8;

float rankAll(const float* values, std::int64_t n, std::int64_t w, std::vector<float>& scratch) {
    scratch.assign(values, values + n);
    std::nth_element(scratch.begin(), scratch.begin() + (w - 1), scratch.end(), std::greater<float>());
    return scratch[static_cast<std::size_t>(w - 1)];
}

void indicesAtLeastScalar(const float* values, std::int64_t from, std::int64_t n, float threshold,
                          std::vector<std::int64_t>& out) {
    for (std::int64_t t = from; t < n; ++t)
        if (values[t] >= threshold) out.push_back(t);
}

#ifdef ATTNSCOPE_SELECT_AVX2
// Eight values per compare; the selected values are few (a few times w of n), so most blocks are
// skipped on an all-zero mask and the rest are picked out bit by bit.
__attribute__((target("avx2"))) void indicesAtLeastAvx2(const float* values, std::int64_t n, float threshold,
                                                        std::vector<std::int64_t>& out) {
    const __m256 thr = _mm256_set1_ps(threshold);
    const std::int64_t body = n - n % 8;
    for (std::int64_t t = 0; t < body; t += 8) {
        auto mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(values + t), thr, _CMP_GE_OQ)));
        while (mask != 0) {
            out.push_back(t + __builtin_ctz(mask));
            mask &= mask - 1;
        }
    }
    indicesAtLeastScalar(values, body, n, threshold, out);
}
#endif

}  // namespace

void indicesAtLeast(const float* values, std::int64_t n, float threshold, std::vector<std::int64_t>& out) {
    out.clear();
#ifdef ATTNSCOPE_SELECT_AVX2
    static const bool avx2 = haveAvx2Fma();
    if (avx2) return indicesAtLeastAvx2(values, n, threshold, out);
#endif
    indicesAtLeastScalar(values, 0, n, threshold, out);
}

float wthLargest(const float* values, std::int64_t n, std::int64_t w, std::vector<float>& scratch,
                 std::vector<std::int64_t>& indexScratch) {
    if (n < kMinSampledRatio * w || n < 2 * kSampleStride) return rankAll(values, n, w, scratch);
    // A sample of m values holds about w·m/n of the top w; taking its (2·w·m/n + 8)-th largest as
    // the threshold keeps about 2w + 8·stride values, and fewer than w only when the sample is
    // very unrepresentative, which the count below detects.
    const std::int64_t m = n / kSampleStride;
    const std::int64_t rank = std::min(m, 2 * w / kSampleStride + 8);
    scratch.resize(static_cast<std::size_t>(m));
    for (std::int64_t s = 0; s < m; ++s) scratch[static_cast<std::size_t>(s)] = values[s * kSampleStride];
    std::nth_element(scratch.begin(), scratch.begin() + (rank - 1), scratch.end(), std::greater<float>());
    indicesAtLeast(values, n, scratch[static_cast<std::size_t>(rank - 1)], indexScratch);
    const auto kept = static_cast<std::int64_t>(indexScratch.size());
    if (kept < w) return rankAll(values, n, w, scratch);
    scratch.resize(static_cast<std::size_t>(kept));
    for (std::int64_t c = 0; c < kept; ++c) scratch[static_cast<std::size_t>(c)] = values[indexScratch[static_cast<std::size_t>(c)]];
    std::nth_element(scratch.begin(), scratch.begin() + (w - 1), scratch.end(), std::greater<float>());
    return scratch[static_cast<std::size_t>(w - 1)];
}

}  // namespace attnscope::engine
