#pragma once

#include <cstdint>
#include <vector>

namespace attnscope::engine {

/// The w-th largest of values[0..n) (1 <= w <= n), exactly as std::nth_element with
/// std::greater would find it, but mostly from a small candidate set: a strided sample gives a
/// threshold that, for unsorted data, lets through a few times w values; only those are ranked.
/// When the sample's threshold lets through fewer than w values (sorted or adversarial data) the
/// whole array is ranked, so the answer is always exact. NaN-free input; the vectors are scratch.
float wthLargest(const float* values, std::int64_t n, std::int64_t w, std::vector<float>& scratch,
                 std::vector<std::int64_t>& indexScratch);

/// The indices t (ascending) with values[t] >= threshold, into `out` (cleared first).
void indicesAtLeast(const float* values, std::int64_t n, float threshold, std::vector<std::int64_t>& out);

}  // namespace attnscope::engine
