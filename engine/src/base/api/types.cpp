#include <attnscope/types.h>

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

float AttentionResult::weightAt(int head, std::int64_t query, std::int64_t key) const {
    if (!weights || head < 0 || head >= heads || query < 0 || query >= n || key < 0 || key >= m) return 0.0f;
    return weights->weightAt(head, query, key);
}

}  // namespace attnscope::engine
