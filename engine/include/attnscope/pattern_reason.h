#pragma once
// Why a key is in a query's pattern: the reasons every variant's weights carry.

#include <cstdint>

namespace attnscope::engine {

/// Why a key is in a query's pattern. Stored as uint8 in `pattern.reason`. Values are a contract.
enum class PatternReason : std::uint8_t {
    Dense = 0,   ///< every key (full attention)
    Causal = 1,  ///< every key j <= i
    Local = 2, Dilated = 3, Stride = 4, Summary = 5, Global = 6, Random = 7,
    Ring = 8, Relay = 9, Bucket = 10, Cluster = 11, Memory = 12, TopK = 13, Support = 14,
};
const char* patternReasonName(PatternReason reason);
constexpr int kPatternReasonCount = 15;

}  // namespace attnscope::engine
