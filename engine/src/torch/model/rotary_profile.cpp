#include "torch/model/rotary_profile.h"

#include "torch/model/rotary_positions.h"

#include <cmath>

namespace attnscope::engine {
namespace {

/// Mean of q_i·k_j·scale over the pairs j ≤ i at each distance i − j, head by head, a block of
/// queries at a time so that no n × n matrix is held.
std::vector<float> meanByDistance(const at::Tensor& q, const at::Tensor& k, double scale) {
    constexpr std::int64_t kBlock = 256;
    const std::int64_t heads = q.size(0), n = q.size(1);
    std::vector<float> out(static_cast<std::size_t>(heads * n));
    std::vector<double> sums(static_cast<std::size_t>(n));
    for (std::int64_t h = 0; h < heads; ++h) {
        std::fill(sums.begin(), sums.end(), 0.0);
        for (std::int64_t i0 = 0; i0 < n; i0 += kBlock) {
            const std::int64_t i1 = std::min(n, i0 + kBlock);
            const at::Tensor scores = at::mm(q[h].narrow(0, i0, i1 - i0), k[h].narrow(0, 0, i1).t()).contiguous();
            const float* s = scores.data_ptr<float>();
            for (std::int64_t i = i0; i < i1; ++i) {
                const float* row = s + (i - i0) * i1;
                for (std::int64_t j = 0; j <= i; ++j) sums[static_cast<std::size_t>(i - j)] += row[j];
            }
        }
        for (std::int64_t d = 0; d < n; ++d)
            out[static_cast<std::size_t>(h * n + d)] =
                static_cast<float>(sums[static_cast<std::size_t>(d)] * scale / static_cast<double>(n - d));
    }
    return out;
}

}  // namespace

RotaryDistanceProfile rotaryDistanceProfile(const at::Tensor& q, const at::Tensor& k, const RopeSettings& rope,
                                            std::int64_t maxPositions) {
    const std::int64_t n = q.size(1), headDim = q.size(2);
    const at::Tensor frequencies = ropeInverseFrequencies(rope, headDim, n, maxPositions);
    const double factor = ropeAttentionFactor(rope);
    // The rotation by −θ undoes the one by θ; YaRN scaled cos and sin by `factor`.
    const at::Tensor qPlain = applyRotary(q, -frequencies, 1.0 / factor).contiguous();
    const at::Tensor kPlain = applyRotary(k, -frequencies, 1.0 / factor).contiguous();
    const double scale = 1.0 / std::sqrt(static_cast<double>(headDim));
    RotaryDistanceProfile profile;
    profile.heads = q.size(0);
    profile.n = n;
    profile.rotated = meanByDistance(q.contiguous(), k.contiguous(), scale);
    profile.unrotated = meanByDistance(qPlain, kPlain, scale);
    profile.attentionFactor = factor;
    if (n <= RotaryDistanceProfile::kRotaryVectorsMaxTokens) {
        profile.headDim = headDim;
        profile.unrotatedQ.assign(qPlain.data_ptr<float>(), qPlain.data_ptr<float>() + qPlain.numel());
        profile.unrotatedK.assign(kPlain.data_ptr<float>(), kPlain.data_ptr<float>() + kPlain.numel());
    }
    return profile;
}

}  // namespace attnscope::engine
