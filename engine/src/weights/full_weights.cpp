#include "weights/full_weights.h"

#include "kernels/blas_gemm.h"
#include "kernels/softmax_kernel.h"

#include <attnscope/types.h>

#include <algorithm>
#include <cmath>

namespace attnscope::engine {

void scoreTile(const float* q, const float* k, std::int64_t d, std::int64_t r0, std::int64_t r1, std::int64_t c0,
               std::int64_t c1, float* out) {
    gemmRowMajor(true, r1 - r0, c1 - c0, d, q + r0 * d, d, k + c0 * d, d, out, c1 - c0);
}

FullWeights::FullWeights(SharedFloats q, SharedFloats k, std::vector<float> shift, std::vector<float> sum, bool causal,
                         std::vector<std::uint8_t> keyPadding, std::vector<std::uint8_t> queryPadding)
    : DenseRowWeights(q.shape[0], q.shape[1], k.shape[1]), m_q(std::move(q)), m_k(std::move(k)),
      m_shift(std::move(shift)), m_sum(std::move(sum)),
      m_causal(causal), m_keyPadding(std::move(keyPadding)), m_queryPadding(std::move(queryPadding)) {
    m_d = m_q.shape[2];
    m_scale = 1.0f / std::sqrt(static_cast<float>(m_d));
}

void FullWeights::fillTile(WeightTile& out) const {
    const std::int64_t n = queries(), m = keys(), cols = out.cols();
    const std::int64_t offset = m - n;  // causal: key j visible iff j <= i + offset
    const float* qh = m_q.data.get() + out.head * n * m_d;
    const float* kh = m_k.data.get() + out.head * m * m_d;
    scoreTile(qh, kh, m_d, out.r0, out.r1, out.c0, out.c1, out.weights.data());
    const bool reasons = !out.reasons.empty();
    const auto bit = static_cast<ReasonBits>(1u << static_cast<unsigned>(m_causal ? PatternReason::Causal : PatternReason::Dense));
    for (std::int64_t i = out.r0; i < out.r1; ++i) {
        float* w = out.weights.data() + (i - out.r0) * cols;
        const std::int64_t end = m_causal ? std::clamp<std::int64_t>(i + offset + 1, out.c0, out.c1) : out.c1;
        if (reasons) {
            std::fill_n(out.reasons.begin() + (i - out.r0) * cols, end - out.c0, bit);
            std::fill_n(out.multiplicity.begin() + (i - out.r0) * cols, end - out.c0, std::uint8_t{1});
        }
        const float shift = m_shift[static_cast<std::size_t>(out.head * n + i)];
        const float sum = m_sum[static_cast<std::size_t>(out.head * n + i)];
        const bool padded = !m_queryPadding.empty() && m_queryPadding[static_cast<std::size_t>(i)];
        if (padded || !(sum > 0.0f)) {
            std::fill(w, w + cols, 0.0f);
            continue;
        }
        // (the shift is the row's max: the exponents are <= 0 up to rounding, clamped)
        for (std::int64_t j = out.c0; j < end; ++j) w[j - out.c0] = std::min(w[j - out.c0] * m_scale - shift, 0.0f);
        expNonPositiveInPlace(w, end - out.c0);
        const float inv = 1.0f / sum;
        for (std::int64_t j = out.c0; j < end; ++j) w[j - out.c0] *= inv;
        std::fill(w + (end - out.c0), w + cols, 0.0f);
        if (!m_keyPadding.empty())
            for (std::int64_t j = out.c0; j < end; ++j)
                if (m_keyPadding[static_cast<std::size_t>(j)]) w[j - out.c0] = 0.0f;
    }
}

}  // namespace attnscope::engine

#include "plain/param_access.h"
#include "weights/variant_weights.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeFullWeights(const KeptState& state) {
    const PlainTensor& shift = state.stat("row_max", DType::F32, {state.heads, state.n});
    const PlainTensor& sum = state.stat("row_sum", DType::F32, {state.heads, state.n});
    return std::make_shared<FullWeights>(state.q, state.k, shift.f32, sum.f32, paramBool(state.params, "causal"),
                                         state.keyPadding, state.queryPadding());
}

}  // namespace attnscope::engine
