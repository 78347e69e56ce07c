#pragma once
// T5's relative position buckets (Raffel et al. 2020; Hugging Face T5Attention
// `_relative_position_bucket`): half the buckets for each direction when bidirectional, the first
// half of those exact distances, the rest logarithmic up to `maxDistance`, beyond which all
// distances share the last bucket.

#include <ATen/ATen.h>

#include <cstdint>

namespace attnscope::engine {

/// [n, n] I64 buckets of relative position key - query, computed with the reference's float32
/// operations so that distances on a bucket edge land where the reference puts them.
at::Tensor t5RelativeBuckets(std::int64_t n, bool bidirectional, std::int64_t buckets, std::int64_t maxDistance);

}  // namespace attnscope::engine
