#pragma once
// Scores of one query against a list of keys, for recomputing weights tile by tile.

#include <cstdint>

namespace attnscope::engine {

/// out[t] = q · k[keys[t]] (rows of k are d floats apart).
void dotKeys(const float* q, const float* k, std::int64_t d, const std::int32_t* keys, std::int64_t count, float* out);

/// out[t] = q · k[j0 + t] for t < count.
void dotRange(const float* q, const float* k, std::int64_t d, std::int64_t j0, std::int64_t count, float* out);

}  // namespace attnscope::engine
