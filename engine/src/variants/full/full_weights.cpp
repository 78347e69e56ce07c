#include "variants/full/full_weights.h"

#include "kernels/blas_gemm.h"
#include "kernels/softmax_kernel.h"

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
    // The same float exponentials the cells take (fillTile), summed in double.
    std::vector<float> e(static_cast<std::size_t>(end));
    for (std::int64_t j = 0; j < end; ++j)
        e[static_cast<std::size_t>(j)] = !m_keyPadding.empty() && m_keyPadding[static_cast<std::size_t>(j)]
                                             ? -1000.0f
                                             : std::min(s[j] * m_scale - shift, 0.0f);
    expNonPositiveInPlace(e.data(), end);
    for (float v : e) sum += v;
}

const KeyPanels& FullWeights::panelsOf(int head) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_panels.empty()) {
        m_panels.resize(static_cast<std::size_t>(heads()));
        m_norms.resize(static_cast<std::size_t>(heads()));
    }
    auto& panels = m_panels[static_cast<std::size_t>(head)];
    if (!panels) {
        panels = std::make_shared<const KeyPanels>(m_k.data.get() + head * keys() * m_d, keys(), m_d);
        RowNorms& norms = m_norms[static_cast<std::size_t>(head)];
        norms.shift.assign(static_cast<std::size_t>(queries()), std::numeric_limits<float>::quiet_NaN());
        norms.sum.assign(static_cast<std::size_t>(queries()), 0.0);
    }
    return *panels;  // (never replaced once made)
}

bool FullWeights::knownNorms(int head, std::int64_t i0, std::int64_t i1, float* shift, double* sum) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    const RowNorms& norms = m_norms[static_cast<std::size_t>(head)];
    bool all = true;
    for (std::int64_t i = i0; i < i1; ++i) {
        shift[i - i0] = norms.shift[static_cast<std::size_t>(i)];
        sum[i - i0] = norms.sum[static_cast<std::size_t>(i)];
        all = all && !std::isnan(shift[i - i0]);
    }
    return all;
}

void FullWeights::fillTile(WeightTile& out) const {
    constexpr std::int64_t kBlock = 16;  // query rows scored together
    const std::int64_t n = queries(), cols = out.cols();
    const KeyPanels& panels = panelsOf(out.head);
    const float* qh = m_q.data.get() + out.head * n * m_d;
    const bool reasons = !out.reasons.empty();
    const auto bit = static_cast<ReasonBits>(1u << static_cast<unsigned>(m_causal ? PatternReason::Causal : PatternReason::Dense));
    std::vector<float> scores;
    float shift[kBlock];
    double sum[kBlock];
    for (std::int64_t i0 = out.r0; i0 < out.r1; i0 += kBlock) {
        const std::int64_t i1 = std::min(i0 + kBlock, out.r1);
        // Rows met for the first time are scored whole: their norms, and this tile's cells from the
        // same scores; otherwise only the tile's keys.
        const bool known = knownNorms(out.head, i0, i1, shift, sum);
        std::int64_t from = out.c0, to = out.c1;
        if (!known) {
            from = 0;
            to = 0;
            for (std::int64_t i = i0; i < i1; ++i) to = std::max(to, rowEnd(i));
            to = std::max(to, out.c1);
        }
        const std::int64_t width = to - from;
        scores.resize(static_cast<std::size_t>((i1 - i0) * width));
        panels.score(qh, i0, i1, from, to, scores.data(), width);
        if (!known) {
            for (std::int64_t i = i0; i < i1; ++i)
                if (std::isnan(shift[i - i0])) normOf(scores.data() + (i - i0) * width, rowEnd(i), shift[i - i0], sum[i - i0]);
            std::lock_guard<std::mutex> lock(m_mutex);
            RowNorms& norms = m_norms[static_cast<std::size_t>(out.head)];
            for (std::int64_t i = i0; i < i1; ++i) {
                norms.shift[static_cast<std::size_t>(i)] = shift[i - i0];
                norms.sum[static_cast<std::size_t>(i)] = sum[i - i0];
            }
        }
        for (std::int64_t i = i0; i < i1; ++i) {
            float* w = out.weights.data() + (i - out.r0) * cols;
            const std::int64_t end = rowEnd(i), cellEnd = std::clamp<std::int64_t>(end, out.c0, out.c1);
            if (reasons) {
                std::fill_n(out.reasons.begin() + (i - out.r0) * cols, cellEnd - out.c0, bit);
                std::fill_n(out.multiplicity.begin() + (i - out.r0) * cols, cellEnd - out.c0, std::uint8_t{1});
            }
            const bool padded = !m_queryPadding.empty() && m_queryPadding[static_cast<std::size_t>(i)];
            if (padded || end == 0 || !(sum[i - i0] > 0)) continue;  // (weights arrive zeroed)
            const float* s = scores.data() + (i - i0) * width + (out.c0 - from);
            const auto inv = static_cast<float>(1.0 / sum[i - i0]);
            // (the shift is the row's max: the exponents are <= 0 up to rounding, clamped)
            for (std::int64_t j = out.c0; j < cellEnd; ++j) w[j - out.c0] = std::min(s[j - out.c0] * m_scale - shift[i - i0], 0.0f);
            expNonPositiveInPlace(w, cellEnd - out.c0);
            for (std::int64_t j = out.c0; j < cellEnd; ++j) w[j - out.c0] *= inv;
            if (!m_keyPadding.empty())
                for (std::int64_t j = out.c0; j < cellEnd; ++j)
                    if (m_keyPadding[static_cast<std::size_t>(j)]) w[j - out.c0] = 0.0f;
        }
    }
}

}  // namespace attnscope::engine

#include "plain/param_access.h"
#include "weights/kept_state.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeFullWeights(const KeptState& state) {
    // (the kept statistics are the file's contract; the weights normalise their own scores)
    state.stat("row_max", DType::F32, {state.heads, state.n});
    state.stat("row_sum", DType::F32, {state.heads, state.n});
    return std::make_shared<FullWeights>(state.q, state.k, paramBool(state.params, "causal"), state.keyPadding,
                                         state.queryPadding());
}

}  // namespace attnscope::engine
