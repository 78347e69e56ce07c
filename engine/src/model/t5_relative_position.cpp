#include "model/t5_relative_position.h"

#include <cmath>

namespace attnscope::engine {

at::Tensor t5RelativeBuckets(std::int64_t n, bool bidirectional, std::int64_t buckets, std::int64_t maxDistance) {
    const at::Tensor position = at::arange(n, at::kLong);
    at::Tensor relative = position.unsqueeze(0) - position.unsqueeze(1);  // [query, key]: key - query
    at::Tensor out = at::zeros({n, n}, at::kLong);
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

}  // namespace attnscope::engine
