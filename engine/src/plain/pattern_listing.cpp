#include "plain/pattern_listing.h"

#include <algorithm>

namespace attnscope::engine {

std::int64_t patternEntryCount(const SparsePattern& pattern) {
    if (!pattern.implicitDense) return pattern.nnz();
    if (!pattern.causal) return pattern.rows * pattern.cols;
    const std::int64_t offset = pattern.cols - pattern.rows;
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < pattern.rows; ++i) total += std::clamp<std::int64_t>(i + offset + 1, 0, pattern.cols);
    return total;
}

SparsePattern listPattern(const SparsePattern& pattern) {
    if (!pattern.implicitDense) return pattern;
    SparsePattern out;
    out.rows = pattern.rows;
    out.cols = pattern.cols;
    out.perHead = false;
    out.causal = pattern.causal;
    const auto total = static_cast<std::size_t>(patternEntryCount(pattern));
    out.rowPtr.reserve(static_cast<std::size_t>(pattern.rows) + 1);
    out.colIdx.reserve(total);
    out.rowPtr.push_back(0);
    const std::int64_t offset = pattern.cols - pattern.rows;
    for (std::int64_t i = 0; i < pattern.rows; ++i) {
        const std::int64_t end = pattern.causal ? std::clamp<std::int64_t>(i + offset + 1, 0, pattern.cols) : pattern.cols;
        for (std::int64_t j = 0; j < end; ++j) out.colIdx.push_back(static_cast<std::int32_t>(j));
        out.rowPtr.push_back(static_cast<std::int64_t>(out.colIdx.size()));
    }
    out.reason.assign(out.colIdx.size(),
                      static_cast<std::uint8_t>(pattern.causal ? PatternReason::Causal : PatternReason::Dense));
    return out;
}

}  // namespace attnscope::engine
