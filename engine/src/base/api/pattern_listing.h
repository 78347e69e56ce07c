#pragma once
// A result's pattern as an explicit CSR listing (`--write-pattern`): every (query, key) entry
// with its reason, a key listed c times as c entries. Built from the result's weights on request.

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>

namespace attnscope::engine {

/// Entries of every head (duplicates counted): the size of the listing.
std::int64_t patternEntryCount(const AttentionWeights& weights);

/// The listing, one row per (head, query) (perHead), or an OutOfBudget error when its
/// 13 bytes per entry (column, reason, weight as listed by the writer) exceed `budgetBytes`.
Result<SparsePattern> listPattern(const AttentionWeights& weights, std::uint64_t budgetBytes);

}  // namespace attnscope::engine
