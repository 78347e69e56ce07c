// Weights of `reformer`: the union softmax over a row's candidates in every hash round
// (reformer_geometry.h): w(i, j) = c_ij · exp(v_ij − M_i − L_i) with c_ij the times key j occurs
// (1 when allow_duplicate_attention is false), v_ij = q_i·q̂_j / sqrt(d) (the shared-QK keys
// q̂ = q / |q|), or -5e4 for the query itself: w = c · exp(v − M) / Z with the row's largest shift
// M (stats.row_max) and the sum Z of the rounds' exps against it (stats.row_sum), exact near -5e4.

#include "attention/variants/reformer/reformer_geometry.h"
#include "attention/weights/sparse_row_weights.h"
#include "attention/weights/kept_state.h"

#include "base/api/param_access.h"

#include <attnscope/types.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace attnscope::engine {
namespace {

/// A row's candidate keys over every hash round.
struct Candidates final : RowWeightsOwnScratch {
    std::vector<ReformerCandidate> list;
};

class ReformerWeights final : public SparseRowWeights {
public:
    ReformerWeights(const KeptState& s, ReformerSettings settings)
        : SparseRowWeights(s.heads, s.n, s.n), m_q(s.q), m_settings(settings), m_keyPadding(s.keyPadding), m_d(s.d) {
        m_rowMax = s.stat("row_max", DType::F32, {s.heads, s.n}).f32;
        m_rowSum = s.stat("row_sum", DType::F32, {s.heads, s.n}).f32;
        m_sorted = s.draw("sorted", DType::I64, {s.heads, settings.hashes, settings.nPad}).i64;
        m_buckets = s.draw("buckets", DType::I64, {s.heads, settings.hashes, s.n}).i64;
        for (std::int64_t b : m_buckets)
            if (b < 0 || b >= settings.buckets) throw EngineError(ErrorCode::InvalidInput, "reformer: diagnostic.buckets out of range");
        m_geometry.resize(static_cast<std::size_t>(s.heads));
        m_invNorm.assign(static_cast<std::size_t>(s.heads * s.n), 0.0f);
        for (std::int64_t t = 0; t < s.heads * s.n; ++t) {
            const float* x = m_q.data.get() + t * m_d;
            double sq = 0;
            for (std::int64_t c = 0; c < m_d; ++c) sq += static_cast<double>(x[c]) * x[c];
            m_invNorm[static_cast<std::size_t>(t)] = static_cast<float>(1.0 / std::max(std::sqrt(sq), 1e-12));
        }
        for (std::int64_t h = 0; h < s.heads; ++h) geometryOf(static_cast<int>(h));  // checks the sorted order
    }

private:
    const ReformerGeometry& geometryOf(int head) const {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto& g = m_geometry[static_cast<std::size_t>(head)];
        if (!g)
            g = std::make_unique<ReformerGeometry>(m_settings, queries(),
                                                   m_sorted.data() + head * m_settings.hashes * m_settings.nPad,
                                                   m_buckets.data() + head * m_settings.hashes * queries(), m_keyPadding);
        return *g;
    }

    void rowKeys(int head, std::int64_t i, Scratch& s) const override {
        s.keys.clear();
        if (!m_keyPadding.empty() && m_keyPadding[static_cast<std::size_t>(i)]) return;  // a padded query
        auto& cands = s.own<Candidates>().list;
        geometryOf(head).candidates(i, cands);
        s.sort.clear();
        for (const auto& c : cands)
            s.sort.emplace_back(c.key, static_cast<std::uint8_t>(c.sameBucket ? PatternReason::Bucket : PatternReason::Local));
        mergeListing(s);
    }

    // The row's own union softmax over its distinct keys (as pattern_weights.h explains): M is the
    // largest score, self's -5e4 included, so exp(v − M) loses nothing near -5e4.
    void rowWeights(int head, std::int64_t i, Scratch& s, std::int64_t, std::int64_t) const override {
        const std::int64_t t0 = 0, t1 = static_cast<std::int64_t>(s.keys.keys.size());
        float* w = s.weights.data();
        const auto at = static_cast<std::size_t>(head * queries() + i);
        const float big = m_rowMax[at], sum = m_rowSum[at];
        if (!(sum > 0.0f)) {
            std::fill(w + t0, w + t1, 0.0f);
            return;
        }
        const float scale = 1.0f / std::sqrt(static_cast<float>(m_d));
        const float* qh = m_q.data.get() + head * queries() * m_d;
        const float* qi = qh + i * m_d;
        float top = -std::numeric_limits<float>::infinity();
        for (std::int64_t t = t0; t < t1; ++t) {
            const std::int32_t j = s.keys.keys[static_cast<std::size_t>(t)];
            float v = kReformerSelfScore;
            if (j != i) {
                const float* qj = qh + static_cast<std::int64_t>(j) * m_d;
                float dot = 0;
                for (std::int64_t c = 0; c < m_d; ++c) dot += qi[c] * qj[c];
                v = dot * m_invNorm[static_cast<std::size_t>(head * queries() + j)] * scale;
            }
            w[t] = v;
            top = std::max(top, v);
        }
        (void)big;
        double total = 0;
        for (std::int64_t t = t0; t < t1; ++t) {
            const float count = m_settings.allowDuplicates ? static_cast<float>(s.keys.multiplicity[static_cast<std::size_t>(t)]) : 1.0f;
            w[t] = count * std::exp(w[t] - top);
            total += w[t];
        }
        for (std::int64_t t = t0; t < t1; ++t) w[t] = static_cast<float>(w[t] / total);
    }

    SharedFloats m_q;
    ReformerSettings m_settings;
    std::vector<std::uint8_t> m_keyPadding;
    std::int64_t m_d = 0;
    std::vector<float> m_rowMax, m_rowSum, m_invNorm;
    std::vector<std::int64_t> m_sorted, m_buckets;
    mutable std::mutex m_mutex;
    mutable std::vector<std::unique_ptr<ReformerGeometry>> m_geometry;
};

}  // namespace

std::shared_ptr<const AttentionWeights> makeReformerWeights(const KeptState& state) {
    ReformerSettings s;
    s.buckets = paramInt(state.params, "n_buckets");
    s.hashes = paramInt(state.params, "n_hashes");
    s.chunkLen = paramInt(state.params, "chunk_len");
    s.before = paramInt(state.params, "n_chunks_before");
    s.after = paramInt(state.params, "n_chunks_after");
    s.causal = paramBool(state.params, "causal");
    s.acrossBuckets = paramBool(state.params, "attend_across_buckets");
    s.allowDuplicates = paramBool(state.params, "allow_duplicate_attention");
    if (s.chunkLen < 1 || s.chunkLen > state.n || s.buckets < 2)
        throw EngineError(ErrorCode::InvalidInput, "reformer: chunk_len and n_buckets must hold the values the run used");
    s.nPad = (state.n + s.chunkLen - 1) / s.chunkLen * s.chunkLen;
    return std::make_shared<ReformerWeights>(state, s);
}

}  // namespace attnscope::engine
