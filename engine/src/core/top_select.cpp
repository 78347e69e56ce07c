#include "core/top_select.h"

#include <algorithm>
#include <functional>

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

}  // namespace

float wthLargest(const float* values, std::int64_t n, std::int64_t w, std::vector<float>& scratch) {
    if (n < kMinSampledRatio * w || n < 2 * kSampleStride) return rankAll(values, n, w, scratch);
    // A sample of m values holds about w·m/n of the top w; taking its (2·w·m/n + 8)-th largest as
    // the threshold keeps about 2w + 8·stride values, and fewer than w only when the sample is
    // very unrepresentative, which the count below detects.
    const std::int64_t m = n / kSampleStride;
    const std::int64_t rank = std::min(m, 2 * w / kSampleStride + 8);
    scratch.resize(static_cast<std::size_t>(m));
    for (std::int64_t s = 0; s < m; ++s) scratch[static_cast<std::size_t>(s)] = values[s * kSampleStride];
    std::nth_element(scratch.begin(), scratch.begin() + (rank - 1), scratch.end(), std::greater<float>());
    const float threshold = scratch[static_cast<std::size_t>(rank - 1)];
    // Candidates: every value >= threshold (branch-free compaction into the scratch).
    scratch.resize(static_cast<std::size_t>(n));
    float* out = scratch.data();
    std::int64_t kept = 0;
    for (std::int64_t t = 0; t < n; ++t) {
        out[kept] = values[t];
        kept += values[t] >= threshold;
    }
    if (kept < w) return rankAll(values, n, w, scratch);
    std::nth_element(scratch.begin(), scratch.begin() + (w - 1), scratch.begin() + kept, std::greater<float>());
    return scratch[static_cast<std::size_t>(w - 1)];
}

}  // namespace attnscope::engine
