// Weights of `transformer_xl`: row i is a softmax over keys firstKey(i) … i of the relative scores
// (transformer_xl_geometry.h) from the result's Q, K and its u, v, pos_keys. Keys before i's
// segment carry the reason `memory`, the segment's own keys `causal`.

#include "attention/variants/transformer_xl/transformer_xl_geometry.h"
#include "attention/weights/kept_state.h"
#include "attention/weights/sparse_row_weights.h"

#include "base/kernels/softmax_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

using namespace transformer_xl;

class TransformerXlWeights final : public SparseRowWeights {
public:
    TransformerXlWeights(const KeptState& state, Settings settings, Parameters parameters)
        : SparseRowWeights(state.heads, state.n, state.m), m_q(state.q), m_k(state.k), m_settings(settings),
          m_parameters(std::move(parameters)), m_keyPadding(state.keyPadding), m_queryPadding(state.queryPadding()),
          m_d(state.d), m_scale(1.0f / std::sqrt(static_cast<float>(state.d))) {}

private:
    void rowKeys(int, std::int64_t i, Scratch& s) const override {
        s.keys.clear();
        if (!m_queryPadding.empty() && m_queryPadding[static_cast<std::size_t>(i)]) return;
        const std::int64_t start = segmentStart(m_settings, i);
        for (std::int64_t j = firstKey(m_settings, i); j <= i; ++j) {
            s.keys.keys.push_back(static_cast<std::int32_t>(j));
            s.keys.multiplicity.push_back(1);
            const PatternReason reason = j < start ? PatternReason::Memory : PatternReason::Causal;
            s.keys.reasons.push_back(static_cast<ReasonBits>(1u << static_cast<unsigned>(reason)));
        }
    }

    // The row's own softmax over its keys (padded keys get 0 and no share of the sum).
    void rowWeights(int head, std::int64_t i, Scratch& s, std::int64_t, std::int64_t) const override {
        const std::int64_t count = static_cast<std::int64_t>(s.keys.keys.size());
        if (count == 0) return;
        const std::int64_t first = s.keys.keys.front();
        float* w = s.weights.data();
        s.scores.resize(static_cast<std::size_t>(2 * m_d + count));
        rowScores(m_q.data.get() + (head * queries() + i) * m_d, m_k.data.get() + head * keys() * m_d,
                  m_parameters.wBias.f32.data() + head * m_d, m_parameters.rBias.f32.data() + head * m_d,
                  m_parameters.posKeys.f32.data() + head * distances(m_settings) * m_d, m_d, i, first,
                  m_settings.relative, m_scale, w, s.scores.data());
        const auto padded = [&](std::int64_t t) {
            return !m_keyPadding.empty() && m_keyPadding[static_cast<std::size_t>(first + t)];
        };
        float big = -std::numeric_limits<float>::infinity();
        for (std::int64_t t = 0; t < count; ++t)
            if (!padded(t)) big = std::max(big, w[t]);
        if (!std::isfinite(big)) {
            std::fill(w, w + count, 0.0f);
            return;
        }
        for (std::int64_t t = 0; t < count; ++t) w[t] = padded(t) ? -1000.0f : std::min(w[t] - big, 0.0f);
        expNonPositiveInPlace(w, count);
        double total = 0;
        for (std::int64_t t = 0; t < count; ++t) total += padded(t) ? 0.0 : w[t];
        for (std::int64_t t = 0; t < count; ++t) w[t] = padded(t) ? 0.0f : static_cast<float>(w[t] / total);
    }

    SharedFloats m_q, m_k;
    Settings m_settings;
    Parameters m_parameters;
    std::vector<std::uint8_t> m_keyPadding, m_queryPadding;
    std::int64_t m_d = 0;
    float m_scale = 1.0f;
};

}  // namespace

Parameters transformer_xl::keptParameters(const KeptState& state, const Settings& s) {
    Parameters p;
    p.wBias = state.draw("r_w_bias", DType::F32, {state.heads, state.d});
    p.rBias = state.draw("r_r_bias", DType::F32, {state.heads, state.d});
    p.posKeys = state.draw("pos_keys", DType::F32, {state.heads, distances(s), state.d});
    return p;
}

std::shared_ptr<const AttentionWeights> makeTransformerXlWeights(const KeptState& state) {
    state.stat("row_max", DType::F32, {state.heads, state.n});
    state.stat("row_sum", DType::F32, {state.heads, state.n});
    if (state.m != state.n) throw EngineError(ErrorCode::InvalidInput, "transformer_xl: a result needs m == n");
    const Settings settings = settingsOf(state.params);
    return std::make_shared<TransformerXlWeights>(state, settings, keptParameters(state, settings));
}

}  // namespace attnscope::engine
