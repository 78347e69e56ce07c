#pragma once
// What a result's entries are, from the catalog rather than from id strings: which one is the
// exact reference, which variant an entry ran.

#include <attnscope/types.h>
#include <attnscope/variant_info.h>

namespace attnscope::engine {

/// The catalog entry of the variant a result ran (nullptr for an id the catalog does not know).
const VariantInfo* infoOf(const AttentionResult& result);

/// The keys of a result that are input tokens: m less the variant's extra keys (Star's relay).
std::int64_t tokenKeys(const AttentionResult& result);

/// True when two results can be compared cell by cell: same heads and queries, and the same token
/// keys (a relay column is left out).
bool comparableShapes(const AttentionResult& a, const AttentionResult& b);

/// RunResult::exactReference when the engine set it, else the first result whose variant is
/// exact and whose shape is results[0]'s (results built by hand); -1 when there is none.
int exactReferenceIndex(const RunResult& run);

/// What comparisons are measured against: the model layer's own attention when the run has it
/// (RunResult::ownAttention), else the exact reference; -1 when there is neither.
int referenceIndex(const RunResult& run);

}  // namespace attnscope::engine
