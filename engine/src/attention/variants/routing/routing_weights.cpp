// Weights of `routing` (lucidrains' KmeansAttention in eval mode; VARIANTS.md §7). topw: query i
// belongs to the clusters whose top-w queries hold it; in cluster c its row attends c's top-w
// keys: w(i, j) = Σ_c exp(q_i·k_j / sqrt(d) − shift_{c,i}) / sum_{c,i} / (count_i + 1e-5), the
// scatter-mean. argmax: i attends the keys of its own nearest centroid, w(i, j) =
// exp(s_ij − shift_i) / sum_i. Causal and
// padded keys are masked; padded queries and rows without keys have weight 0.

#include "attention/weights/sparse_row_weights.h"
#include "attention/weights/kept_state.h"

#include "base/kernels/softmax_kernel.h"
#include "base/api/param_access.h"
#include "attention/weights/row_scores.h"

#include <attnscope/types.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

constexpr double kScatterBias = 1e-5;  // lucidrains scatter_mean: sum / (count + 1e-5)

/// A row's (cluster row, key, score) entries, grouped by cluster row in the order forEachKey gives.
struct ScoredEntries final : RowWeightsOwnScratch {
    struct Entry {
        std::size_t row;
        std::int32_t key;
        float score;
    };
    std::vector<Entry> entries;
};

class RoutingWeights final : public SparseRowWeights {
public:
    explicit RoutingWeights(const KeptState& s)
        : SparseRowWeights(s.heads, s.n, s.n), m_q(s.q), m_k(s.k), m_keyPadding(s.keyPadding), m_d(s.d) {
        m_topw = paramChoice(s.params, "mode") == "topw";
        m_causal = paramBool(s.params, "causal");
        const std::int64_t clusters = paramInt(s.params, "clusters"), window = paramInt(s.params, "window_size");
        m_clusters = clusters;
        m_window = window;
        if (m_topw) {
            m_shift = s.stat("row_max", DType::F32, {s.heads, clusters, window}).f32;
            m_sum = s.stat("row_sum", DType::F32, {s.heads, clusters, window}).f32;
            m_clusterQueries = s.draw("cluster_queries", DType::I64, {s.heads, clusters, window}).i64;
            m_clusterKeys = s.draw("cluster_keys", DType::I64, {s.heads, clusters, window}).i64;
            m_count = s.draw("routed_count", DType::I64, {s.heads, s.n}).i64;
            for (std::int64_t t : m_clusterQueries)
                if (t < 0 || t >= s.n) throw EngineError(ErrorCode::InvalidInput, "routing: cluster_queries out of range");
            for (std::int64_t t : m_clusterKeys)
                if (t < 0 || t >= s.n) throw EngineError(ErrorCode::InvalidInput, "routing: cluster_keys out of range");
        } else {
            m_shift = s.stat("row_max", DType::F32, {s.heads, s.n}).f32;
            m_sum = s.stat("row_sum", DType::F32, {s.heads, s.n}).f32;
            m_nearest = s.draw("nearest", DType::I64, {s.heads, 2, s.n}).i64;
            for (std::int64_t c : m_nearest)
                if (c < 0 || c >= clusters) throw EngineError(ErrorCode::InvalidInput, "routing: nearest out of range");
        }
        buildMembership(s.heads, s.n);
    }

private:
    // For each head and query, its (cluster, slot) pairs (topw) or, per cluster, its keys (argmax).
    void buildMembership(std::int64_t heads, std::int64_t n) {
        m_memberStart.assign(static_cast<std::size_t>(heads * n + 1), 0);
        if (m_topw) {
            for (std::int64_t h = 0; h < heads; ++h)
                for (std::int64_t e = 0; e < m_clusters * m_window; ++e)
                    ++m_memberStart[static_cast<std::size_t>(h * n + m_clusterQueries[static_cast<std::size_t>(h * m_clusters * m_window + e)] + 1)];
            for (std::size_t t = 1; t < m_memberStart.size(); ++t) m_memberStart[t] += m_memberStart[t - 1];
            m_members.resize(static_cast<std::size_t>(m_memberStart.back()));
            std::vector<std::int64_t> fill(m_memberStart.begin(), m_memberStart.end() - 1);
            for (std::int64_t h = 0; h < heads; ++h)
                for (std::int64_t e = 0; e < m_clusters * m_window; ++e) {
                    const std::int64_t i = m_clusterQueries[static_cast<std::size_t>(h * m_clusters * m_window + e)];
                    m_members[static_cast<std::size_t>(fill[static_cast<std::size_t>(h * n + i)]++)] = e;  // c·w + slot
                }
            return;
        }
        // argmax: keys grouped by their nearest centroid, per head: m_members = keys, by cluster
        m_clusterStart.assign(static_cast<std::size_t>(heads * m_clusters + 1), 0);
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t j = 0; j < n; ++j)
                ++m_clusterStart[static_cast<std::size_t>(h * m_clusters + m_nearest[static_cast<std::size_t>((h * 2 + 1) * n + j)] + 1)];
        for (std::size_t t = 1; t < m_clusterStart.size(); ++t) m_clusterStart[t] += m_clusterStart[t - 1];
        m_members.resize(static_cast<std::size_t>(m_clusterStart.back()));
        std::vector<std::int64_t> fill(m_clusterStart.begin(), m_clusterStart.end() - 1);
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t j = 0; j < n; ++j) {
                const std::int64_t c = m_nearest[static_cast<std::size_t>((h * 2 + 1) * n + j)];
                m_members[static_cast<std::size_t>(fill[static_cast<std::size_t>(h * m_clusters + c)]++)] = j;
            }
    }

    bool masked(std::int64_t i, std::int64_t j) const {
        return (m_causal && j > i) || (!m_keyPadding.empty() && m_keyPadding[static_cast<std::size_t>(j)]);
    }

    // (key, cluster row) pairs of row i: lse index and key, in the clusters' order.
    template <class F>
    void forEachKey(int head, std::int64_t i, F&& f) const {
        const std::int64_t n = queries();
        if (!m_keyPadding.empty() && m_keyPadding[static_cast<std::size_t>(i)]) return;
        if (m_topw) {
            for (std::int64_t e = m_memberStart[static_cast<std::size_t>(head * n + i)];
                 e < m_memberStart[static_cast<std::size_t>(head * n + i + 1)]; ++e) {
                const std::int64_t slot = m_members[static_cast<std::size_t>(e)];  // c·w + r
                const std::int64_t c = slot / m_window;
                const std::size_t lseAt = static_cast<std::size_t>(head * m_clusters * m_window + slot);
                for (std::int64_t t = 0; t < m_window; ++t) {
                    const std::int64_t j = m_clusterKeys[static_cast<std::size_t>((head * m_clusters + c) * m_window + t)];
                    if (!masked(i, j)) f(j, lseAt);
                }
            }
            return;
        }
        const std::int64_t c = m_nearest[static_cast<std::size_t>(head * 2 * n + i)];
        for (std::int64_t e = m_clusterStart[static_cast<std::size_t>(head * m_clusters + c)];
             e < m_clusterStart[static_cast<std::size_t>(head * m_clusters + c + 1)]; ++e) {
            const std::int64_t j = m_members[static_cast<std::size_t>(e)];
            if (!masked(i, j)) f(j, static_cast<std::size_t>(head * n + i));
        }
    }

    void rowKeys(int head, std::int64_t i, Scratch& s) const override {
        s.keys.clear();
        s.sort.clear();
        forEachKey(head, i, [&](std::int64_t j, std::size_t) { s.sort.emplace_back(static_cast<std::int32_t>(j), 0); });
        std::sort(s.sort.begin(), s.sort.end());
        const auto bit = static_cast<ReasonBits>(1u << static_cast<unsigned>(PatternReason::Cluster));
        for (const auto& entry : s.sort) {
            if (!s.keys.keys.empty() && s.keys.keys.back() == entry.first) {
                if (s.keys.multiplicity.back() < 255) ++s.keys.multiplicity.back();
                continue;
            }
            s.keys.keys.push_back(entry.first);
            s.keys.multiplicity.push_back(1);
            s.keys.reasons.push_back(bit);
        }
    }

    // Each cluster row's own softmax over the cluster's keys (as pattern_weights.h explains), then
    // the scatter-mean over the row's clusters.
    void rowWeights(int head, std::int64_t i, Scratch& s, std::int64_t t0, std::int64_t t1) const override {
        float* w = s.weights.data();
        std::fill(w + t0, w + t1, 0.0f);
        const std::int64_t n = queries();
        const float scale = 1.0f / std::sqrt(static_cast<float>(m_d));
        const double divisor = m_topw ? static_cast<double>(m_count[static_cast<std::size_t>(head * n + i)]) + kScatterBias : 1.0;
        const float* qi = m_q.data.get() + (head * n + i) * m_d;
        const float* kh = m_k.data.get() + head * n * m_d;
        const auto& keys = s.keys.keys;
        auto& entries = s.own<ScoredEntries>().entries;
        entries.clear();
        forEachKey(head, i, [&](std::int64_t j, std::size_t rowAt) {
            if (!(m_sum[rowAt] > 0.0f)) return;  // nothing admissible in that cluster row
            float dot = 0;
            const auto key = static_cast<std::int32_t>(j);
            dotKeys(qi, kh, m_d, &key, 1, &dot);
            entries.push_back(ScoredEntries::Entry{rowAt, key, dot * scale});
        });
        for (std::size_t a = 0; a < entries.size();) {
            std::size_t b = a;
            float big = -std::numeric_limits<float>::infinity();
            for (; b < entries.size() && entries[b].row == entries[a].row; ++b) big = std::max(big, entries[b].score);
            double total = 0;
            for (std::size_t e = a; e < b; ++e) total += std::exp(static_cast<double>(entries[e].score - big));
            for (std::size_t e = a; e < b; ++e) {
                const auto it = std::lower_bound(keys.begin() + t0, keys.begin() + t1, entries[e].key);
                if (it == keys.begin() + t1 || *it != entries[e].key) continue;
                w[it - keys.begin()] += static_cast<float>(std::exp(static_cast<double>(entries[e].score - big)) / total / divisor);
            }
            a = b;
        }
    }

    SharedFloats m_q, m_k;
    std::vector<std::uint8_t> m_keyPadding;
    std::int64_t m_d = 0, m_clusters = 0, m_window = 0;
    bool m_topw = true, m_causal = false;
    std::vector<float> m_shift, m_sum;
    std::vector<std::int64_t> m_clusterQueries, m_clusterKeys, m_count, m_nearest;
    std::vector<std::int64_t> m_memberStart, m_clusterStart, m_members;
};

}  // namespace

std::shared_ptr<const AttentionWeights> makeRoutingWeights(const KeptState& state) {
    return std::make_shared<RoutingWeights>(state);
}

}  // namespace attnscope::engine
