// Weights of `linformer`, the implied token-level map: w(i, j) = Σ_s pbar(i, s) F(s, j) with
// pbar(i, s) = exp(q_i·kp_s / sqrt(d) − shift_i) / sum_i over the k projected keys kp = E K
// (stats k_proj, row_max, row_sum)
// and F's columns of padded keys zeroed. Signed; rows need not sum to 1 (VARIANTS.md §8).

#include "base/runtime/huge_pages.h"
#include "attention/weights/dense_row_weights.h"
#include "attention/weights/kept_state.h"

#include "base/kernels/blas_gemm.h"
#include "base/kernels/softmax_kernel.h"

#include <attnscope/types.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

class LinformerWeights final : public DenseRowWeights {
public:
    LinformerWeights(const KeptState& s, const PlainTensor& f, std::int64_t slots)
        : DenseRowWeights(s.heads, s.n, s.m), m_q(s.q), m_slots(slots), m_d(s.d) {
        m_shift = s.stat("row_max", DType::F32, {s.heads, s.n}).f32;
        m_sum = s.stat("row_sum", DType::F32, {s.heads, s.n}).f32;
        m_kProj = s.stat("k_proj", DType::F32, {s.heads, slots, s.d}).f32;
        m_perHead = f.shape.size() == 3;
        m_f = copyOnHugePages(f.f32);  // (copied: padded keys' columns are zeroed below)
        for (std::int64_t j = 0; j < static_cast<std::int64_t>(s.keyPadding.size()); ++j)
            if (s.keyPadding[static_cast<std::size_t>(j)])
                for (std::size_t row = 0; row < m_f.size() / static_cast<std::size_t>(s.m); ++row)
                    m_f[row * static_cast<std::size_t>(s.m) + static_cast<std::size_t>(j)] = 0.0f;
    }

private:
    void fillTile(WeightTile& out) const override {
        const std::int64_t n = queries(), m = keys(), k = m_slots, rows = out.rows(), cols = out.cols();
        const float scale = 1.0f / std::sqrt(static_cast<float>(m_d));
        // pbar: [rows, k] = softmax rows over the projected keys, from the kept lse
        std::vector<float> pbar(static_cast<std::size_t>(rows * k));
        gemmRowMajor(true, rows, k, m_d, m_q.data.get() + (out.head * n + out.r0) * m_d, m_d,
                     m_kProj.data() + out.head * k * m_d, m_d, pbar.data(), k);
        for (std::int64_t i = 0; i < rows; ++i) {
            // the row's own softmax over the k slots (as pattern_weights.h explains)
            float* p = pbar.data() + i * k;
            float big = -std::numeric_limits<float>::infinity();
            for (std::int64_t s = 0; s < k; ++s) big = std::max(big, p[s] *= scale);
            for (std::int64_t s = 0; s < k; ++s) p[s] -= big;
            expNonPositiveInPlace(p, k);
            double total = 0;
            for (std::int64_t s = 0; s < k; ++s) total += p[s];
            for (std::int64_t s = 0; s < k; ++s) p[s] = static_cast<float>(p[s] / total);
        }
        const float* f = m_f.data() + (m_perHead ? out.head * k * m : 0);
        gemmRowMajor(false, rows, cols, k, pbar.data(), k, f + out.c0, m, out.weights.data(), cols);
        if (!out.reasons.empty()) {
            std::fill(out.reasons.begin(), out.reasons.end(), static_cast<ReasonBits>(1u << static_cast<unsigned>(PatternReason::Dense)));
            std::fill(out.multiplicity.begin(), out.multiplicity.end(), std::uint8_t{1});
        }
    }

    SharedFloats m_q;
    std::int64_t m_slots = 0, m_d = 0;
    bool m_perHead = false;
    std::vector<float> m_shift, m_sum, m_kProj, m_f;
};

}  // namespace

std::shared_ptr<const AttentionWeights> makeLinformerWeights(const KeptState& state) {
    const PlainTensor& kProj = state.stat("k_proj", DType::F32, {state.heads, -1, state.d});
    const std::int64_t slots = kProj.shape[1];
    const PlainTensor& f = state.diagnostics && state.diagnostics->count("F") && state.diagnostics->at("F").shape.size() == 3
                               ? state.draw("F", DType::F32, {state.heads, slots, state.m})
                               : state.draw("F", DType::F32, {slots, state.m});
    return std::make_shared<LinformerWeights>(state, f, slots);
}

}  // namespace attnscope::engine
