#include <attnscope/types.h>

#include <algorithm>

namespace attnscope::engine {

const char* patternReasonName(PatternReason reason) {
    switch (reason) {
    case PatternReason::Dense: return "dense";
    case PatternReason::Causal: return "causal";
    case PatternReason::Local: return "local";
    case PatternReason::Dilated: return "dilated";
    case PatternReason::Stride: return "stride";
    case PatternReason::Summary: return "summary";
    case PatternReason::Global: return "global";
    case PatternReason::Random: return "random";
    case PatternReason::Ring: return "ring";
    case PatternReason::Relay: return "relay";
    case PatternReason::Bucket: return "bucket";
    case PatternReason::Cluster: return "cluster";
    case PatternReason::Memory: return "memory";
    case PatternReason::TopK: return "topk";
    case PatternReason::Support: return "support";
    }
    return "?";
}

bool SparsePattern::allows(int head, std::int64_t query, std::int64_t key) const {
    if (query < 0 || query >= rows || key < 0 || key >= cols) return false;
    if (implicitDense) return !causal || key <= query;
    const std::int64_t row = (perHead ? static_cast<std::int64_t>(head) * rows : 0) + query;
    const auto begin = colIdx.begin() + rowPtr[row];
    const auto end = colIdx.begin() + rowPtr[row + 1];
    return std::binary_search(begin, end, static_cast<std::int32_t>(key));
}

float AttentionResult::weightAt(int head, std::int64_t query, std::int64_t key) const {
    if (head < 0 || head >= heads || query < 0 || query >= n || key < 0 || key >= m) return 0.0f;
    switch (weightsLayout) {
    case WeightsLayout::None: return 0.0f;
    case WeightsLayout::Dense: return weights[static_cast<std::size_t>((head * n + query) * m + key)];
    case WeightsLayout::AlignedWithPattern: {
        if (pattern.implicitDense) return 0.0f;
        const std::int64_t row = (pattern.perHead ? head * n : 0) + query;
        const std::int64_t base = pattern.perHead ? 0 : head * pattern.nnz();
        float sum = 0.0f;  // a key listed twice counts twice (VARIANTS.md conventions)
        for (std::int64_t e = pattern.rowPtr[row]; e < pattern.rowPtr[row + 1]; ++e)
            if (pattern.colIdx[e] == key) sum += weights[static_cast<std::size_t>(base + e)];
        return sum;
    }
    }
    return 0.0f;
}

}  // namespace attnscope::engine
