#pragma once
// A variant computed on its input padded at the end (tokens [n, padded) masked: keys get weight
// exactly 0, queries are zeroed) reports the result of the n real tokens only. Cropping is exact:
// a padded key never takes weight, so every kept row's weights still sum to 1.

#include "attention/variants/variant.h"

#include <cstdint>

namespace attnscope::engine {

/// Qkv with `extra` zero rows appended to q, k and v, marked as padded keys (after the request's
/// own key padding, if any).
Qkv padQkv(const Qkv& qkv, std::int64_t extra);

/// Crops a result computed on result.n padded tokens to its first n: output rows, the [H, n] row
/// statistics, row status and the empty-row count; result.n and result.m become n.
void cropPaddedResult(AttentionResult& result, std::int64_t n);

}  // namespace attnscope::engine
