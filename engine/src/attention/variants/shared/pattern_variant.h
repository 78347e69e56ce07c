#pragma once
// What the pattern variants (sparse_strided, sparse_fixed, longformer, bigbird, star) share:
// running the pattern kernel on their BlockPattern, their memory estimate, parameter-schema
// shorthands and input checks.

#include "attention/catalog/param_specs.h"
#include "attention/pattern/block_pattern.h"
#include "attention/variants/variant.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

/// Bytes a pattern variant's run allocates besides Q, K, V: the output and the row statistics
/// (kept), and the kernel's per-thread scratch for groups of about `keysPerRow` keys.
std::uint64_t patternRunBytes(const ProblemShape& shape, double keysPerRow);

/// Runs the pattern kernel as the "attention" stage, with the request's key padding (and, for
/// self-attention, query padding), and copies the counters into the result.
void runPatternVariant(const Qkv& qkv, const BlockPattern& pattern, RunContext& ctx, AttentionResult& result);

/// Throws EngineError(InvalidArgument) naming the variant and the rule when m != n.
void requireSelfAttention(const std::string& variant, const Qkv& qkv);

/// Query padding of self-attention: the key padding when m == n, else empty.
std::vector<std::uint8_t> selfQueryPadding(const Qkv& qkv);

}  // namespace attnscope::engine
