#pragma once
// Scans for NaN and infinities, fast enough to run on every request's Q, K and V.

#include <cstddef>

namespace attnscope::engine {

/// Start of the first 4096-value chunk of values[0, count) that holds a NaN or an infinity
/// (count when there is none).
std::size_t firstNonFiniteChunk(const float* values, std::size_t count);

/// True when every value of values[0, count) is finite.
inline bool allFinite(const float* values, std::size_t count) { return firstNonFiniteChunk(values, count) == count; }

}  // namespace attnscope::engine
