#pragma once
// AttentionWeights over weights given in full: a captured attention tensor, a model's own
// attention, or a hand-made result in a test. Plain C++.

#include <attnscope/attention_weights.h>
#include <attnscope/types.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace attnscope::engine {

/// values: [heads, n, m] row-major. reasons (same layout, PatternReason per cell, kNotListed for
/// a key outside the pattern); empty = every key allowed as `dense`.
std::shared_ptr<const AttentionWeights> makeDenseWeights(std::int64_t heads, std::int64_t n, std::int64_t m,
                                                         std::vector<float> values,
                                                         std::vector<std::uint8_t> reasons = {});
constexpr std::uint8_t kNotListed = 0xFF;

/// A listed pattern (CSR, per head or shared by the heads) with weights aligned with its entries
/// ([nnz] when perHead, [heads, nnz] otherwise); a key listed twice sums its weights.
std::shared_ptr<const AttentionWeights> makeListedWeights(std::int64_t heads, SparsePattern pattern,
                                                          std::vector<float> aligned);

}  // namespace attnscope::engine
