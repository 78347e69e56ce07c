// Weights of `linear` and `performer`: w(i, j) = phi(q_i)·phi(k_j) / den_i for every key (j <= i
// when causal), phi(k_j) = 0 for padded keys, 0 for rows whose den is 0. linear: phi = elu + 1.
// performer: FAVOR+ features of x·d^(-1/4) through the run's projection W, the query stabilised
// by its row's largest projection and the keys by the head's (stats.key_shift), as the run did.

#include "attention/weights/dense_row_weights.h"
#include "attention/weights/kept_state.h"

#include "base/kernels/blas_gemm.h"
#include "base/kernels/softmax_kernel.h"
#include "base/api/param_access.h"

#include <attnscope/types.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace attnscope::engine {
namespace {

struct FeatureMap {
    bool performer = false, relu = false;
    std::int64_t features = 0;      ///< r
    std::vector<float> projection;  ///< performer: [H, r, d] already scaled by d^(-1/4)
    std::vector<float> keyShift;    ///< performer softmax kernel: [H]
    float eps = 0, ratio = 1, half = 0;
};

class FeatureWeights final : public DenseRowWeights {
public:
    FeatureWeights(const KeptState& s, FeatureMap map)
        : DenseRowWeights(s.heads, s.n, s.m), m_q(s.q), m_k(s.k), m_map(std::move(map)),
          m_causal(paramBool(s.params, "causal")), m_keyPadding(s.keyPadding), m_d(s.d) {
        m_den = s.stat("den", DType::F32, {s.heads, s.n}).f32;
    }

private:
    // phi of rows [r0, r1) of x ([rows, d] of one head) into out [r1 - r0, r]; keys: the key side.
    void features(int head, const float* x, std::int64_t r0, std::int64_t r1, bool keySide, float* out) const {
        const std::int64_t rows = r1 - r0, d = m_d, r = m_map.features;
        if (!m_map.performer) {
            std::copy(x + r0 * d, x + r1 * d, out);
            eluPlusOneInPlace(out, rows * d);
            return;
        }
        const float* w = m_map.projection.data() + head * r * d;
        gemmRowMajor(true, rows, r, d, x + r0 * d, d, w, d, out, r);
        if (m_map.relu) {
            for (std::int64_t e = 0; e < rows * r; ++e) out[e] = std::max(out[e], 0.0f) + 1e-3f;
            return;
        }
        std::vector<float> shift(static_cast<std::size_t>(rows));
        for (std::int64_t t = 0; t < rows; ++t) {
            const float* xt = x + (r0 + t) * d;
            double sq = 0;
            for (std::int64_t c = 0; c < d; ++c) sq += static_cast<double>(xt[c]) * xt[c];
            const float diagonal = static_cast<float>(sq * m_map.half);
            shift[static_cast<std::size_t>(t)] =
                diagonal + (keySide ? m_map.keyShift[static_cast<std::size_t>(head)] : maxValue(out + t * r, r));
        }
        positiveFeaturesInPlace(out, rows, r, shift.data(), m_map.eps, m_map.ratio);
    }

    // phi(K) of a head, computed once and kept for the head last asked (overviews walk one head).
    std::shared_ptr<const std::vector<float>> keyFeatures(int head) const {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_cachedHead == head && m_cached) return m_cached;
        const std::int64_t m = keys();
        auto phi = std::make_shared<std::vector<float>>(static_cast<std::size_t>(m * m_map.features));
        features(head, m_k.data.get() + head * m * m_d, 0, m, true, phi->data());
        for (std::int64_t j = 0; j < static_cast<std::int64_t>(m_keyPadding.size()); ++j)
            if (m_keyPadding[static_cast<std::size_t>(j)])
                std::fill_n(phi->begin() + j * m_map.features, m_map.features, 0.0f);
        m_cached = phi;
        m_cachedHead = head;
        return phi;
    }

    void fillTile(WeightTile& out) const override {
        const std::int64_t n = queries(), r = m_map.features, cols = out.cols();
        const auto phiK = keyFeatures(out.head);
        std::vector<float> phiQ(static_cast<std::size_t>(out.rows() * r));
        features(out.head, m_q.data.get() + out.head * n * m_d, out.r0, out.r1, false, phiQ.data());
        gemmRowMajor(true, out.rows(), cols, r, phiQ.data(), r, phiK->data() + out.c0 * r, r, out.weights.data(), cols);
        const auto bit =
            static_cast<ReasonBits>(1u << static_cast<unsigned>(m_causal ? PatternReason::Causal : PatternReason::Dense));
        for (std::int64_t i = out.r0; i < out.r1; ++i) {
            float* w = out.weights.data() + (i - out.r0) * cols;
            const float den = m_den[static_cast<std::size_t>(out.head * n + i)];
            const std::int64_t end = m_causal ? std::clamp<std::int64_t>(i + 1, out.c0, out.c1) : out.c1;
            const float inv = den > 0 ? 1.0f / den : 0.0f;
            for (std::int64_t j = out.c0; j < end; ++j) w[j - out.c0] *= inv;
            std::fill(w + (end - out.c0), w + cols, 0.0f);
            if (!out.reasons.empty()) {
                std::fill_n(out.reasons.begin() + (i - out.r0) * cols, end - out.c0, bit);
                std::fill_n(out.multiplicity.begin() + (i - out.r0) * cols, end - out.c0, std::uint8_t{1});
            }
        }
    }

    SharedFloats m_q, m_k;
    FeatureMap m_map;
    bool m_causal = false;
    std::vector<std::uint8_t> m_keyPadding;
    std::vector<float> m_den;
    std::int64_t m_d = 0;
    mutable std::mutex m_mutex;
    mutable int m_cachedHead = -1;
    mutable std::shared_ptr<const std::vector<float>> m_cached;
};

}  // namespace

std::shared_ptr<const AttentionWeights> makeFeatureWeights(const KeptState& state) {
    FeatureMap map;
    map.performer = state.variantId == "performer";
    map.features = state.d;
    if (map.performer) {
        const PlainTensor& w = state.draw("projection", DType::F32, {state.heads, -1, state.d});
        map.features = w.shape[1];
        const double normalizer = std::pow(static_cast<double>(state.d), -0.25);
        map.projection.resize(w.f32.size());
        for (std::size_t e = 0; e < w.f32.size(); ++e) map.projection[e] = static_cast<float>(w.f32[e] * normalizer);
        map.relu = paramChoice(state.params, "kernel") == "relu";
        map.keyShift = state.stat("key_shift", DType::F32, {state.heads}).f32;
        map.eps = static_cast<float>(paramFloat(state.params, "feature_eps"));
        map.ratio = static_cast<float>(1.0 / std::sqrt(static_cast<double>(map.features)));
        map.half = static_cast<float>(0.5 * normalizer * normalizer);
    }
    return std::make_shared<FeatureWeights>(state, std::move(map));
}

}  // namespace attnscope::engine
