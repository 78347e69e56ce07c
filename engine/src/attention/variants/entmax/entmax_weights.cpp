// Weights of `entmax`: w(i, j) = max(0, (alpha-1)(z_ij − zmax_i) − tau_i)^(1/(alpha-1)) / norm_i
// with z = q·k / sqrt(d) over the admissible keys and zmax = the row's largest raw score (stats.shift)
// / sqrt(d), in double (alpha = 1: exp(z − zmax) / norm); rows that
// never ran (padded, or nothing admissible) have norm 0 and weight 0. Reason `support` where w > 0.

#include "attention/weights/dense_row_weights.h"
#include "attention/weights/softmax_row_weights.h"
#include "attention/weights/kept_state.h"

#include "base/api/param_access.h"

#include <attnscope/types.h>

#include <cmath>

namespace attnscope::engine {
namespace {

class EntmaxWeights final : public DenseRowWeights {
public:
    EntmaxWeights(const KeptState& s, std::vector<double> alpha)
        : DenseRowWeights(s.heads, s.n, s.m), m_q(s.q), m_k(s.k), m_alpha(std::move(alpha)),
          m_causal(paramBool(s.params, "causal")), m_keyPadding(s.keyPadding), m_d(s.d) {
        m_shift = s.stat("shift", DType::F32, {s.heads, s.n}).f32;
        m_tau = s.stat("tau", DType::F32, {s.heads, s.n}).f32;
        m_norm = s.stat("norm", DType::F32, {s.heads, s.n}).f32;
    }

private:
    void fillTile(WeightTile& out) const override {
        const std::int64_t n = queries(), m = keys(), cols = out.cols(), offset = m - n;
        // the run's float scale, widened: z = score · scale exactly as the run formed it
        const double scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(m_d)));
        scoreTile(m_q.data.get() + out.head * n * m_d, m_k.data.get() + out.head * m * m_d, m_d, out.r0, out.r1, out.c0,
                  out.c1, out.weights.data());
        const double alpha = m_alpha.size() == 1 ? m_alpha[0] : m_alpha[static_cast<std::size_t>(out.head)];
        const double power = alpha == 1.0 ? 1.0 : 1.0 / (alpha - 1.0);
        const auto bit = static_cast<ReasonBits>(1u << static_cast<unsigned>(PatternReason::Support));
        for (std::int64_t i = out.r0; i < out.r1; ++i) {
            const auto at = static_cast<std::size_t>(out.head * n + i);
            float* w = out.weights.data() + (i - out.r0) * cols;
            const double norm = m_norm[at], shift = static_cast<double>(m_shift[at]) * scale, tau = m_tau[at];
            for (std::int64_t j = out.c0; j < out.c1; ++j) {
                const bool admissible = norm > 0 && !(m_causal && j > i + offset) &&
                                        !(!m_keyPadding.empty() && m_keyPadding[static_cast<std::size_t>(j)]);
                double p = 0;
                if (admissible) {
                    const double z = static_cast<double>(w[j - out.c0]) * scale;
                    p = alpha == 1.0 ? std::exp(z - shift) : std::pow(std::max(0.0, (alpha - 1.0) * (z - shift) - tau), power);
                    p /= norm;
                }
                const auto value = static_cast<float>(p);
                w[j - out.c0] = value;
                if (!out.reasons.empty() && value > 0.0f) {
                    out.reasons[static_cast<std::size_t>((i - out.r0) * cols + (j - out.c0))] = bit;
                    out.multiplicity[static_cast<std::size_t>((i - out.r0) * cols + (j - out.c0))] = 1;
                }
            }
        }
    }

    SharedFloats m_q, m_k;
    std::vector<double> m_alpha;
    bool m_causal = false;
    std::vector<std::uint8_t> m_keyPadding;
    std::vector<float> m_shift, m_tau, m_norm;
    std::int64_t m_d = 0;
};

}  // namespace

std::shared_ptr<const AttentionWeights> makeEntmaxWeights(const KeptState& state) {
    std::vector<double> alpha = paramFloatList(state.params, "alpha");
    if (alpha.size() != 1 && static_cast<std::int64_t>(alpha.size()) != state.heads)
        throw EngineError(ErrorCode::InvalidInput, "entmax: parameter 'alpha' needs 1 value or one per head");
    return std::make_shared<EntmaxWeights>(state, std::move(alpha));
}

}  // namespace attnscope::engine
