#include "torch/forwards/transfo_xl/transfo_xl_forward_positions.h"

namespace attnscope::engine::families::transfo_xl {

at::Tensor relativeEncoding(const at::Tensor& distances, std::int64_t d, std::int64_t clampLen) {
    const at::Tensor p = (clampLen > 0 ? distances.clamp_max(clampLen) : distances).to(at::kFloat);
    const at::Tensor inverse = 1.0 / at::pow(10000.0, at::arange(0, d, 2, at::kFloat) / static_cast<double>(d));
    const at::Tensor angles = at::outer(p, inverse);
    return at::cat({at::sin(angles), at::cos(angles)}, 1);
}

at::Tensor segmentEncoding(std::int64_t klen, std::int64_t d, std::int64_t clampLen) {
    return relativeEncoding(at::arange(klen - 1, -1, -1, at::kLong), d, clampLen);
}

at::Tensor relativeColumns(std::int64_t qlen, std::int64_t mlen) {
    const std::int64_t klen = mlen + qlen;
    const at::Tensor a = at::arange(qlen, at::kLong).unsqueeze(1), b = at::arange(klen, at::kLong).unsqueeze(0);
    return (klen - 1 - (mlen + a - b)).clamp(0, klen - 1);
}

at::Tensor segmentMask(std::int64_t qlen, std::int64_t mlen, std::int64_t memLen, bool sameLength) {
    const std::int64_t klen = mlen + qlen;
    const at::Tensor a = at::arange(qlen, at::kLong).unsqueeze(1), b = at::arange(klen, at::kLong).unsqueeze(0);
    at::Tensor masked = b > a + mlen;
    if (sameLength) {
        const std::int64_t maskLen = klen - memLen, shift = maskLen > 0 ? qlen - maskLen : qlen;
        masked = masked.logical_or(b <= a - shift);
    }
    return masked;
}

}  // namespace attnscope::engine::families::transfo_xl
