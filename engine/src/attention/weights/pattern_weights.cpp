#include "attention/weights/pattern_weights.h"

#include "attention/weights/row_scores.h"

#include <algorithm>
#include <limits>

#include <cmath>

namespace attnscope::engine {

PatternWeights::PatternWeights(BlockPattern pattern, SharedFloats q, SharedFloats k, std::int64_t m,
                               std::vector<float> shift, std::vector<float> sum, std::vector<std::uint8_t> keyPadding,
                               std::vector<std::uint8_t> queryPadding)
    : SparseRowWeights(q.shape[0], q.shape[1], m), m_pattern(std::move(pattern)), m_q(std::move(q)),
      m_k(std::move(k)), m_shift(std::move(shift)), m_sum(std::move(sum)), m_keyPadding(std::move(keyPadding)),
      m_queryPadding(std::move(queryPadding)) {
    m_d = m_q.shape[2];
    m_realKeys = m_k.shape[1];
    m_scale = 1.0f / std::sqrt(static_cast<float>(m_d));
    m_rows.resize(static_cast<std::size_t>(heads()));
    m_poolings.resize(static_cast<std::size_t>(heads()));
    m_poolingMade.assign(static_cast<std::size_t>(heads()), 0);
    if (m_realKeys + 1 == m) {  // the relay: the mean of each head's keys
        m_relay.assign(static_cast<std::size_t>(heads() * m_d), 0.0f);
        for (std::int64_t h = 0; h < heads(); ++h) {
            std::vector<double> sum(static_cast<std::size_t>(m_d), 0.0);
            const float* kh = m_k.data.get() + h * m_realKeys * m_d;
            for (std::int64_t j = 0; j < m_realKeys; ++j)
                for (std::int64_t c = 0; c < m_d; ++c) sum[static_cast<std::size_t>(c)] += kh[j * m_d + c];
            for (std::int64_t c = 0; c < m_d; ++c)
                m_relay[static_cast<std::size_t>(h * m_d + c)] =
                    static_cast<float>(sum[static_cast<std::size_t>(c)] / static_cast<double>(m_realKeys));
        }
    }
}

const PatternRows& PatternWeights::rowsOf(int head) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto& rows = m_rows[static_cast<std::size_t>(head)];
    if (!rows) {
        // heads that share a plan share its row index
        const auto& plan = m_pattern.heads[static_cast<std::size_t>(head)];
        for (std::size_t h = 0; h < m_rows.size() && !rows; ++h)
            if (m_rows[h] && m_pattern.heads[h] == plan) rows = m_rows[h];
        if (!rows) rows = std::make_shared<const PatternRows>(plan, m_pattern.n, keys());
    }
    return *rows;
}

std::int64_t PatternWeights::entries(int head) const {
    const PatternRows& rows = rowsOf(head);
    // (keys past m, BigBird's padding, would be counted by rowEntries: those rows list keys)
    if (m_pattern.m != keys()) return SparseRowWeights::entries(head);
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < queries(); ++i) total += rows.rowEntries(i);
    return total;
}

std::shared_ptr<const GroupPooling> PatternWeights::groupPooling(int head) const {
    if (!m_relay.empty()) return nullptr;  // the relay's key is no row of k
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto at = static_cast<std::size_t>(head);
    if (!m_poolingMade[at]) {
        // heads that share a plan share its pooling
        const auto& plan = m_pattern.heads[at];
        for (std::size_t h = 0; h < m_poolings.size(); ++h)
            if (m_poolingMade[h] && m_pattern.heads[h] == plan) {
                m_poolings[at] = m_poolings[h];
                m_poolingMade[at] = 1;
            }
        if (!m_poolingMade[at]) m_poolings[at] = makeGroupPooling(*plan, m_pattern.n, m_pattern.m);
        m_poolingMade[at] = 1;
    }
    return m_poolings[at];
}

bool PatternWeights::poolOverview(const GroupPooling& pooling, WeightOverview& out,
                                  const std::function<bool(double)>& keepGoing) const {
    const int h = out.region.head;
    PatternHead head;
    head.head = h;
    head.q = m_q.data.get() + h * queries() * m_d;
    head.k = m_k.data.get() + h * m_realKeys * m_d;
    head.keys = m_realKeys;
    head.d = m_d;
    head.scale = m_scale;
    head.shift = m_shift.data() + h * queries();
    head.sum = m_sum.data() + h * queries();
    head.keyPadding = &m_keyPadding;
    head.queryPadding = &m_queryPadding;
    head.weights = this;
    return poolByGroups(pooling, head, out, keepGoing);
}

void PatternWeights::rowKeys(int head, std::int64_t i, Scratch& s) const { rowsOf(head).rowKeys(i, s.keys, s.sort); }

void PatternWeights::rowWeights(int head, std::int64_t i, Scratch& s, std::int64_t, std::int64_t) const {
    const std::int64_t t0 = 0, t1 = static_cast<std::int64_t>(s.keys.keys.size());
    float* w = s.weights.data();
    const float shift = m_shift[static_cast<std::size_t>(head * queries() + i)];
    const float sum = m_sum[static_cast<std::size_t>(head * queries() + i)];
    const bool rowPadded = !m_queryPadding.empty() && m_queryPadding[static_cast<std::size_t>(i)];
    if (rowPadded || !(sum > 0.0f)) {
        std::fill(w + t0, w + t1, 0.0f);
        return;
    }
    const float* qi = m_q.data.get() + (head * queries() + i) * m_d;
    const float* kh = m_k.data.get() + head * m_realKeys * m_d;
    const std::int32_t* keys = s.keys.keys.data();
    // the relay key, when the row has it, is the last (key m_realKeys)
    std::int64_t real = t1;
    if (!m_relay.empty() && t1 > t0 && keys[t1 - 1] == m_realKeys) real = t1 - 1;
    dotKeys(qi, kh, m_d, keys + t0, real - t0, w + t0);
    if (real < t1) dotRange(qi, m_relay.data() + head * m_d, m_d, 0, 1, w + real);
    (void)shift;
    // the row's own softmax over every key it lists (padded keys take no weight)
    float big = -std::numeric_limits<float>::infinity();
    for (std::int64_t t = t0; t < t1; ++t) {
        const std::int32_t j = keys[t];
        const bool padded = j < static_cast<std::int32_t>(m_keyPadding.size()) && m_keyPadding[static_cast<std::size_t>(j)];
        w[t] = padded ? -std::numeric_limits<float>::infinity() : w[t] * m_scale;
        big = std::max(big, w[t]);
    }
    double total = 0;
    for (std::int64_t t = t0; t < t1; ++t) {
        w[t] = w[t] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(w[t] - big);
        total += static_cast<double>(s.keys.multiplicity[static_cast<std::size_t>(t)]) * w[t];
    }
    const float inv = total > 0 ? static_cast<float>(1.0 / total) : 0.0f;
    for (std::int64_t t = t0; t < t1; ++t) w[t] *= static_cast<float>(s.keys.multiplicity[static_cast<std::size_t>(t)]) * inv;
}

}  // namespace attnscope::engine

#include "base/api/param_access.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makePatternWeights(BlockPattern pattern, const KeptState& state, std::int64_t keys,
                                                           std::vector<std::uint8_t> keyPadding) {
    const PlainTensor& shift = state.stat("row_max", DType::F32, {state.heads, state.n});
    const PlainTensor& sum = state.stat("row_sum", DType::F32, {state.heads, state.n});
    return std::make_shared<PatternWeights>(std::move(pattern), state.q, state.k, keys, shift.f32, sum.f32,
                                            std::move(keyPadding), state.queryPadding());
}

}  // namespace attnscope::engine
