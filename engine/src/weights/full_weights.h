#pragma once
// Weights of `full`: w(i, j) = exp(q_i·k_j / sqrt(d) − shift_i) / sum_i for every key (j <= i + m − n
// when causal), the row's softmax shift (its max) and sum as the run computed them; 0 for padded
// keys and for empty or padded rows (sum 0).

#include "weights/dense_row_weights.h"

#include <cstdint>
#include <vector>

namespace attnscope::engine {

class FullWeights final : public DenseRowWeights {
public:
    /// q: [H, n, d], k: [H, m, d], shift, sum: [H, n].
    FullWeights(SharedFloats q, SharedFloats k, std::vector<float> shift, std::vector<float> sum, bool causal,
                std::vector<std::uint8_t> keyPadding, std::vector<std::uint8_t> queryPadding);

private:
    void fillTile(WeightTile& out) const override;

    SharedFloats m_q, m_k;
    std::vector<float> m_shift, m_sum;
    bool m_causal = false;
    std::vector<std::uint8_t> m_keyPadding, m_queryPadding;
    std::int64_t m_d = 0;
    float m_scale = 1.0f;
};

/// Scores S = Q[r0, r1) K[c0, c1)^T ([rows, cols] row-major into `out`) for one head.
void scoreTile(const float* q, const float* k, std::int64_t d, std::int64_t r0, std::int64_t r1, std::int64_t c0,
               std::int64_t c1, float* out);

}  // namespace attnscope::engine
