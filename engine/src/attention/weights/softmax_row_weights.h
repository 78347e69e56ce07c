#pragma once
// Weights of a softmax row over the keys its rule lets it see (attention/weights/softmax_score_rule.h):
// w(i, j) = exp(s_ij − shift_i) / sum_i with s the rule's score of q_i · k_j; 0 for padded keys
// and for empty or padded rows (stats row_sum 0). `full` is the rule with scale 1/sqrt(d) over
// every key (j <= i + m − n when causal); a model layer's own attention (`model_softmax`) adds its
// scale, soft-cap, window and relative bias.
// Every dot product comes from one routine whose cells do not depend on the rectangle asked for
// (attention/weights/panel_scores.h), and each row's shift and sum from those scores (computed once per row
// and kept), so a cell has the same value in every tile; the kept statistics (the run's, from its
// BLAS scores) agree to float rounding.

#include "attention/weights/dense_row_weights.h"
#include "attention/weights/panel_scores.h"
#include "attention/weights/softmax_score_rule.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace attnscope::engine {

class SoftmaxRowWeights final : public DenseRowWeights {
public:
    /// q: [H, n, d], k: [H, m, d]; `reason`: the bit every allowed cell carries.
    SoftmaxRowWeights(SharedFloats q, SharedFloats k, SoftmaxScoreRule rule, std::vector<std::uint8_t> keyPadding,
                      std::vector<std::uint8_t> queryPadding, ReasonBits reason);

    /// Rows within a window see few keys: views visit their rows instead of tiling them whole.
    bool denseRows() const override { return m_rule.window <= 0; }
    std::int64_t entries(int head) const override;

private:
    struct RowNorms {
        std::vector<float> shift;  ///< [n]; NaN = not computed yet
        std::vector<double> sum;   ///< [n]
    };
    void fillTile(WeightTile& out) const override;
    /// Rows a few at a time over the keys they see (the window's, not all m).
    bool visitRows(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const override;
    /// The head's keys in panels and its row norms, made on first use.
    const KeyPanels& panelsOf(int head) const;
    /// Norms of rows [i0, i1) of `head` into shift/sum; false when some row's are not known yet.
    bool knownNorms(int head, std::int64_t i0, std::int64_t i1, float* shift, double* sum) const;
    /// Shift and sum of row i of `head` from its scores s[0, end − begin) over keys [begin, end)
    /// (padded keys skipped), the head's sink folded in; e[0, end − begin) = the exponentials
    /// summed (exp(s − shift), 0 for a padded key), written only when the row has a finite max.
    void rowExponentials(int head, const float* s, std::int64_t begin, std::int64_t end, float* e, float& shift,
                         double& sum) const;

    SharedFloats m_q, m_k;
    mutable std::mutex m_mutex;
    mutable std::vector<RowNorms> m_norms;  ///< per head, filled as rows are first asked for
    mutable std::vector<std::shared_ptr<const KeyPanels>> m_panels;  ///< per head, made on first use
    SoftmaxScoreRule m_rule;
    std::vector<std::uint8_t> m_keyPadding, m_queryPadding;
    ReasonBits m_reason = 0;
    std::int64_t m_d = 0;
};

/// Scores S = Q[r0, r1) K[c0, c1)^T ([rows, cols] row-major into `out`) for one head.
void scoreTile(const float* q, const float* k, std::int64_t d, std::int64_t r0, std::int64_t r1, std::int64_t c0,
               std::int64_t c1, float* out);

}  // namespace attnscope::engine
