#include "weights/full_weights.h"

#include "kernels/blas_gemm.h"
#include "kernels/softmax_kernel.h"
#include "weights/row_scores.h"

#include <attnscope/types.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::engine {

void scoreTile(const float* q, const float* k, std::int64_t d, std::int64_t r0, std::int64_t r1, std::int64_t c0,
               std::int64_t c1, float* out) {
    gemmRowMajor(true, r1 - r0, c1 - c0, d, q + r0 * d, d, k + c0 * d, d, out, c1 - c0);
}

FullWeights::FullWeights(SharedFloats q, SharedFloats k, bool causal, std::vector<std::uint8_t> keyPadding,
                         std::vector<std::uint8_t> queryPadding)
    : DenseRowWeights(q.shape[0], q.shape[1], k.shape[1]), m_q(std::move(q)), m_k(std::move(k)),
      m_causal(causal), m_keyPadding(std::move(keyPadding)), m_queryPadding(std::move(queryPadding)) {
    m_d = m_q.shape[2];
    m_scale = 1.0f / std::sqrt(static_cast<float>(m_d));
}

std::int64_t FullWeights::entries(int) const {
    const std::int64_t n = queries(), m = keys();
    if (!m_causal) return n * m;
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < n; ++i) total += std::clamp<std::int64_t>(i + m - n + 1, 0, m);
    return total;
}

std::int64_t FullWeights::rowEnd(std::int64_t i) const {
    const std::int64_t n = queries(), m = keys();
    return m_causal ? std::clamp<std::int64_t>(i + m - n + 1, 0, m) : m;
}

void FullWeights::normOf(const float* s, std::int64_t end, float& shift, double& sum) const {
    shift = -std::numeric_limits<float>::infinity();
    for (std::int64_t j = 0; j < end; ++j)
        if (m_keyPadding.empty() || !m_keyPadding[static_cast<std::size_t>(j)]) shift = std::max(shift, s[j] * m_scale);
    sum = 0;
    if (!std::isfinite(shift)) return;
    for (std::int64_t j = 0; j < end; ++j)
        if (m_keyPadding.empty() || !m_keyPadding[static_cast<std::size_t>(j)]) sum += std::exp(static_cast<double>(s[j] * m_scale - shift));
}

void FullWeights::fillTile(WeightTile& out) const {
    const std::int64_t n = queries(), cols = out.cols();
    const float* qh = m_q.data.get() + out.head * n * m_d;
    const float* kh = m_k.data.get() + out.head * keys() * m_d;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_norms.empty()) m_norms.resize(static_cast<std::size_t>(heads()));
        RowNorms& norms = m_norms[static_cast<std::size_t>(out.head)];
        if (norms.shift.empty()) {
            norms.shift.assign(static_cast<std::size_t>(n), std::numeric_limits<float>::quiet_NaN());
            norms.sum.assign(static_cast<std::size_t>(n), 0.0);
        }
    }
    const bool reasons = !out.reasons.empty();
    const auto bit = static_cast<ReasonBits>(1u << static_cast<unsigned>(m_causal ? PatternReason::Causal : PatternReason::Dense));
    std::vector<float> row;
    for (std::int64_t i = out.r0; i < out.r1; ++i) {
        float* w = out.weights.data() + (i - out.r0) * cols;
        const std::int64_t end = rowEnd(i), cellEnd = std::clamp<std::int64_t>(end, out.c0, out.c1);
        if (reasons) {
            std::fill_n(out.reasons.begin() + (i - out.r0) * cols, cellEnd - out.c0, bit);
            std::fill_n(out.multiplicity.begin() + (i - out.r0) * cols, cellEnd - out.c0, std::uint8_t{1});
        }
        const bool padded = !m_queryPadding.empty() && m_queryPadding[static_cast<std::size_t>(i)];
        if (padded || end == 0) continue;  // (weights arrive zeroed)
        const float* qi = qh + i * m_d;
        float shift = 0;
        double sum = 0;
        bool known = false;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            const RowNorms& norms = m_norms[static_cast<std::size_t>(out.head)];
            shift = norms.shift[static_cast<std::size_t>(i)];
            sum = norms.sum[static_cast<std::size_t>(i)];
            known = !std::isnan(shift);
        }
        const float* scores = nullptr;
        if (!known) {  // the whole row once: its norms, and this tile's cells from the same scores
            row.resize(static_cast<std::size_t>(end));
            dotRange(qi, kh, m_d, 0, end, row.data());
            normOf(row.data(), end, shift, sum);
            std::lock_guard<std::mutex> lock(m_mutex);
            RowNorms& norms = m_norms[static_cast<std::size_t>(out.head)];
            norms.shift[static_cast<std::size_t>(i)] = shift;
            norms.sum[static_cast<std::size_t>(i)] = sum;
            scores = row.data() + out.c0;
        } else if (cellEnd > out.c0) {
            dotRange(qi, kh, m_d, out.c0, cellEnd - out.c0, w);
            scores = w;
        }
        if (!(sum > 0) || !scores) {
            std::fill(w, w + cols, 0.0f);
            continue;
        }
        const auto inv = static_cast<float>(1.0 / sum);
        // (the shift is the row's max: the exponents are <= 0 up to rounding, clamped)
        for (std::int64_t j = out.c0; j < cellEnd; ++j) w[j - out.c0] = std::min(scores[j - out.c0] * m_scale - shift, 0.0f);
        expNonPositiveInPlace(w, cellEnd - out.c0);
        for (std::int64_t j = out.c0; j < cellEnd; ++j) w[j - out.c0] *= inv;
        if (!m_keyPadding.empty())
            for (std::int64_t j = out.c0; j < cellEnd; ++j)
                if (m_keyPadding[static_cast<std::size_t>(j)]) w[j - out.c0] = 0.0f;
    }
}

}  // namespace attnscope::engine

#include "plain/param_access.h"
#include "weights/variant_weights.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeFullWeights(const KeptState& state) {
    // (the kept statistics are the file's contract; the weights normalise their own scores)
    state.stat("row_max", DType::F32, {state.heads, state.n});
    state.stat("row_sum", DType::F32, {state.heads, state.n});
    return std::make_shared<FullWeights>(state.q, state.k, paramBool(state.params, "causal"), state.keyPadding,
                                         state.queryPadding());
}

}  // namespace attnscope::engine
