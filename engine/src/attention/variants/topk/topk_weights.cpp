// Weights of `topk`: w(i, j) = exp(q_i·k_j / sqrt(d) − shift_i) / sum_i for the kept keys of row i
// (stats kept_keys, ascending, -1 after the last; row_max, row_sum), 0 elsewhere.

#include "attention/weights/sparse_row_weights.h"
#include "attention/weights/kept_state.h"

#include "base/kernels/softmax_kernel.h"
#include "attention/weights/row_scores.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

class TopKWeights final : public SparseRowWeights {
public:
    TopKWeights(SharedFloats q, SharedFloats k, std::vector<float> shift, std::vector<float> sum,
                std::vector<std::int32_t> keptKeys, std::int64_t width)
        : SparseRowWeights(q.shape[0], q.shape[1], k.shape[1]), m_q(std::move(q)), m_k(std::move(k)),
          m_shift(std::move(shift)), m_sum(std::move(sum)), m_kept(std::move(keptKeys)), m_width(width), m_d(m_q.shape[2]),
          m_scale(1.0f / std::sqrt(static_cast<float>(m_d))) {}

private:
    void rowKeys(int head, std::int64_t i, Scratch& s) const override {
        s.keys.clear();
        const std::int32_t* kept = m_kept.data() + (head * queries() + i) * m_width;
        for (std::int64_t t = 0; t < m_width && kept[t] >= 0; ++t) {
            s.keys.keys.push_back(kept[t]);
            s.keys.multiplicity.push_back(1);
            s.keys.reasons.push_back(static_cast<ReasonBits>(1u << static_cast<unsigned>(PatternReason::TopK)));
        }
    }
    // The row's own softmax over its kept keys (as pattern_weights.h explains).
    void rowWeights(int head, std::int64_t i, Scratch& s, std::int64_t, std::int64_t) const override {
        const std::int64_t t0 = 0, t1 = static_cast<std::int64_t>(s.keys.keys.size());
        float* w = s.weights.data();
        const float shift = m_shift[static_cast<std::size_t>(head * queries() + i)];
        const float sum = m_sum[static_cast<std::size_t>(head * queries() + i)];
        if (!(sum > 0.0f)) {
            std::fill(w + t0, w + t1, 0.0f);
            return;
        }
        dotKeys(m_q.data.get() + (head * queries() + i) * m_d, m_k.data.get() + head * keys() * m_d, m_d,
                s.keys.keys.data() + t0, t1 - t0, w + t0);
        (void)shift;
        float big = -std::numeric_limits<float>::infinity();
        for (std::int64_t t = t0; t < t1; ++t) big = std::max(big, w[t] *= m_scale);
        for (std::int64_t t = t0; t < t1; ++t) w[t] -= big;
        expNonPositiveInPlace(w + t0, t1 - t0);
        double total = 0;
        for (std::int64_t t = t0; t < t1; ++t) total += w[t];
        for (std::int64_t t = t0; t < t1; ++t) w[t] = static_cast<float>(w[t] / total);
    }

    SharedFloats m_q, m_k;
    std::vector<float> m_shift, m_sum;
    std::vector<std::int32_t> m_kept;
    std::int64_t m_width = 0, m_d = 0;
    float m_scale = 1.0f;
};

}  // namespace

std::shared_ptr<const AttentionWeights> makeTopKWeights(const KeptState& state) {
    const PlainTensor& shift = state.stat("row_max", DType::F32, {state.heads, state.n});
    const PlainTensor& sum = state.stat("row_sum", DType::F32, {state.heads, state.n});
    const PlainTensor& kept = state.stat("kept_keys", DType::I32, {state.heads, state.n, -1});
    for (std::int32_t j : kept.i32)
        if (j < -1 || j >= state.m) throw EngineError(ErrorCode::InvalidInput, "topk: stats.kept_keys names a key outside [0, m)");
    return std::make_shared<TopKWeights>(state.q, state.k, shift.f32, sum.f32, kept.i32, kept.shape[2]);
}

}  // namespace attnscope::engine
