#include "torch/forwards/switch_transformers/t5_forward_buckets.h"

#include <cmath>

namespace attnscope::engine {

at::Tensor t5BucketsOf(at::Tensor relative, bool bidirectional, std::int64_t buckets, std::int64_t maxDistance) {
    at::Tensor out = at::zeros_like(relative);
    if (bidirectional) {
        buckets /= 2;
        out += relative.gt(0).to(at::kLong) * buckets;
        relative = relative.abs();
    } else {
        relative = -at::minimum(relative, at::zeros_like(relative));
    }
    const std::int64_t maxExact = buckets / 2;
    const at::Tensor small = relative.lt(maxExact);
    // log(0) is -inf there; those cells take the exact branch below.
    const double logRange = std::log(static_cast<double>(maxDistance) / static_cast<double>(maxExact));
    at::Tensor large = (at::log(relative.to(at::kFloat) / static_cast<double>(maxExact)) / logRange *
                        static_cast<double>(buckets - maxExact))
                           .to(at::kLong) +
                       maxExact;
    large = at::minimum(large, at::full_like(large, buckets - 1));
    return out + at::where(small, relative, large);
}

at::Tensor t5RelativeBuckets(std::int64_t n, bool bidirectional, std::int64_t buckets, std::int64_t maxDistance) {
    const at::Tensor position = at::arange(n, at::kLong);
    // [query, key]: key - query
    return t5BucketsOf(position.unsqueeze(0) - position.unsqueeze(1), bidirectional, buckets, maxDistance);
}

at::Tensor t5BucketsByDistance(std::int64_t n, bool bidirectional, std::int64_t buckets, std::int64_t maxDistance) {
    return t5BucketsOf(at::arange(-(n - 1), n, at::kLong), bidirectional, buckets, maxDistance);
}

}  // namespace attnscope::engine
