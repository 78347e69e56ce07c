#pragma once
// Turns an implicit "all keys" pattern into explicit CSR lists (for export within limits).

#include <attnscope/types.h>

namespace attnscope::engine {

/// Returns `pattern` with rowPtr/colIdx/reason filled in. Explicit patterns are returned as is.
/// Reason Dense (every key) or Causal (keys j <= i + cols - rows).
SparsePattern listPattern(const SparsePattern& pattern);

/// Number of entries the pattern has (per head for shared patterns), listed or implicit.
std::int64_t patternEntryCount(const SparsePattern& pattern);

}  // namespace attnscope::engine
