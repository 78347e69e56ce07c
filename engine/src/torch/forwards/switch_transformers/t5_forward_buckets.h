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
/// [2n - 1] I64 buckets of the relative positions -(n - 1) … n - 1 (entry δ + n - 1 for key - query
/// = δ): the same buckets laid out by distance, as `model_softmax`'s relative_bias is.
at::Tensor t5BucketsByDistance(std::int64_t n, bool bidirectional, std::int64_t buckets, std::int64_t maxDistance);
/// The buckets of the relative positions `relative` (I64, any shape).
at::Tensor t5BucketsOf(at::Tensor relative, bool bidirectional, std::int64_t buckets, std::int64_t maxDistance);

}  // namespace attnscope::engine
