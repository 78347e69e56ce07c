// Weights of `linear` and `performer`: w(i, j) = phi(q_i)·phi(k_j) / den_i for every key (j <= i
// when causal), phi(k_j) = 0 for padded keys, 0 for rows whose den is 0. linear: phi = elu + 1.
// performer: FAVOR+ features of x·d^(-1/4) through the run's projection W, the query stabilised
// by its row's largest projection and the keys by the head's (stats.key_shift), as the run did.

#include "attention/weights/dense_row_weights.h"
#include "attention/weights/kept_state.h"

#include "base/kernels/blas_gemm.h"
#include "base/kernels/softmax_kernel.h"
#include "base/api/param_access.h"
#include "base/runtime/worker_threads.h"

#include <attnscope/types.h>

#include <algorithm>
#include <atomic>
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
        const ReasonBits bit = factoredRule().reason;
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

public:
    bool sumsByFactors() const override { return true; }
    FactoredRule factoredRule() const override {
        return {static_cast<ReasonBits>(1u << static_cast<unsigned>(m_causal ? PatternReason::Causal : PatternReason::Dense)), m_causal};
    }

    bool cellSums(int head, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1, std::int64_t f, double* sums,
                  const std::function<bool(double)>& keepGoing) const override {
        const std::int64_t rows = (r1 - r0 + f - 1) / f, cols = (c1 - c0 + f - 1) / f, r = m_map.features;
        // A[R] = Σ_{i∈R} φ(q_i)/den_i and K[C] = Σ_{j∈C} φ(k_j), a block of whole cells at a time
        std::vector<float> queryCells(static_cast<std::size_t>(rows * r)), keyCells(static_cast<std::size_t>(cols * r));
        if (!sumRows(head, r0, r1, f, false, queryCells.data(), keepGoing, 0.0) ||
            !sumRows(head, c0, c1, f, true, keyCells.data(), keepGoing, 0.4))
            return false;
        std::vector<float> product(static_cast<std::size_t>(rows * cols));
        gemmRowMajor(true, rows, cols, r, queryCells.data(), r, keyCells.data(), r, product.data(), cols);
        for (std::size_t c = 0; c < product.size(); ++c) sums[c] = product[c];
        if (!m_causal) return true;
        // Causal: a cell whose keys all follow its last query is empty; one whose keys straddle
        // some of its queries is summed pair by pair (a running sum of its keys' features).
        std::atomic<bool> stopped{false};
        forEachItem(rows, [&](std::int64_t R, int worker) {
            if (stopped.load(std::memory_order_relaxed)) return;
            if (worker == 0 && keepGoing && !keepGoing(0.8 + 0.2 * static_cast<double>(R) / static_cast<double>(rows))) {
                stopped.store(true);
                return;
            }
            const std::int64_t iA = r0 + R * f, iB = std::min(r1, iA + f);
            for (std::int64_t C = 0; C < cols; ++C) {
                const std::int64_t jA = c0 + C * f, jB = std::min(c1, jA + f);
                double& cell = sums[static_cast<std::size_t>(R * cols + C)];
                if (jA > iB - 1) cell = 0.0;                                  // every key after every query
                else if (jB - 1 > iA) cell = straddlingSum(head, iA, iB, jA, jB);  // some keys after some queries
            }
        });
        return !stopped.load();
    }

private:
    // Σ over the rows [a, b) (queries, or keys when keySide) of φ (queries: divided by den) into
    // out[cell][r], cells of f rows from a; progress reported from `progressFrom` over 0.4.
    bool sumRows(int head, std::int64_t a, std::int64_t b, std::int64_t f, bool keySide, float* out,
                 const std::function<bool(double)>& keepGoing, double progressFrom) const {
        const std::int64_t r = m_map.features, n = keySide ? keys() : queries();
        const float* x = (keySide ? m_k : m_q).data.get() + head * n * m_d;
        const std::int64_t cellsPerBlock = std::max<std::int64_t>(1, 2048 / f), blockRows = cellsPerBlock * f;
        const std::int64_t blocks = (b - a + blockRows - 1) / blockRows;
        std::atomic<bool> stopped{false};
        forEachItem(blocks, [&](std::int64_t block, int worker) {
            if (stopped.load(std::memory_order_relaxed)) return;
            if (worker == 0 && keepGoing && !keepGoing(progressFrom + 0.4 * static_cast<double>(block) / static_cast<double>(blocks))) {
                stopped.store(true);
                return;
            }
            const std::int64_t i0 = a + block * blockRows, i1 = std::min(b, i0 + blockRows);
            std::vector<float> phi(static_cast<std::size_t>((i1 - i0) * r));
            features(head, x, i0, i1, keySide, phi.data());
            std::vector<double> cell(static_cast<std::size_t>(r));
            for (std::int64_t c0 = i0; c0 < i1; c0 += f) {
                std::fill(cell.begin(), cell.end(), 0.0);
                for (std::int64_t i = c0; i < std::min(i1, c0 + f); ++i) {
                    const float scale = rowScale(head, i, keySide);
                    if (scale == 0.0f) continue;
                    const float* p = phi.data() + (i - i0) * r;
                    for (std::int64_t e = 0; e < r; ++e) cell[static_cast<std::size_t>(e)] += static_cast<double>(p[e] * scale);
                }
                float* target = out + ((c0 - a) / f) * r;
                for (std::int64_t e = 0; e < r; ++e) target[e] = static_cast<float>(cell[static_cast<std::size_t>(e)]);
            }
        });
        return !stopped.load();
    }

    // What a row's φ is multiplied by in the weights: 1/den for a query (0 when den is 0), 1 for a
    // key (0 when padded).
    float rowScale(int head, std::int64_t i, bool keySide) const {
        if (keySide) return i < static_cast<std::int64_t>(m_keyPadding.size()) && m_keyPadding[static_cast<std::size_t>(i)] ? 0.0f : 1.0f;
        const float den = m_den[static_cast<std::size_t>(head * queries() + i)];
        return den > 0 ? 1.0f / den : 0.0f;
    }

    // Σ_{i∈[iA,iB)} Σ_{j∈[jA,jB), j<=i} φ(q_i)·φ(k_j)/den_i, the keys' features summed as i grows.
    double straddlingSum(int head, std::int64_t iA, std::int64_t iB, std::int64_t jA, std::int64_t jB) const {
        const std::int64_t r = m_map.features;
        std::vector<float> phiQ(static_cast<std::size_t>((iB - iA) * r)), phiK(static_cast<std::size_t>((jB - jA) * r));
        features(head, m_q.data.get() + head * queries() * m_d, iA, iB, false, phiQ.data());
        features(head, m_k.data.get() + head * keys() * m_d, jA, jB, true, phiK.data());
        std::vector<double> running(static_cast<std::size_t>(r), 0.0);
        std::int64_t added = jA;
        double total = 0;
        for (std::int64_t i = iA; i < iB; ++i) {
            for (; added < jB && added <= i; ++added) {
                const float scale = rowScale(head, added, true);
                const float* p = phiK.data() + (added - jA) * r;
                for (std::int64_t e = 0; e < r; ++e) running[static_cast<std::size_t>(e)] += static_cast<double>(p[e] * scale);
            }
            const float scale = rowScale(head, i, false);
            if (scale == 0.0f) continue;
            const float* q = phiQ.data() + (i - iA) * r;
            double dot = 0;
            for (std::int64_t e = 0; e < r; ++e) dot += static_cast<double>(q[e]) * running[static_cast<std::size_t>(e)];
            total += dot * scale;
        }
        return total;
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
