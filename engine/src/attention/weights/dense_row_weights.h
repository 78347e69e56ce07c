#pragma once
// The weights of variants whose rows may allow every key (full, topk's and entmax's score rows,
// linear, performer, linformer): tiles are computed directly, a block of rows at a time; row
// visits come from whole-row tiles.

#include <attnscope/attention_weights.h>

namespace attnscope::engine {

class DenseRowWeights : public AttentionWeights {
public:
    bool denseRows() const override { return true; }

    /// True when a cell's sum factors (linear, performer: Σ_{i,j} φ(q_i)·φ(k_j)/den_i =
    /// (Σ_i φ(q_i)/den_i)·(Σ_j φ(k_j))), so cellSums costs the cells and the rows, not n × m.
    virtual bool sumsByFactors() const { return false; }
    /// Where sumsByFactors(): the reason bit every allowed key carries, and whether row i allows
    /// only the keys j <= i (causal) rather than every key.
    struct FactoredRule {
        ReasonBits reason = 0;
        bool causal = false;
    };
    virtual FactoredRule factoredRule() const { return {}; }
    /// Where sumsByFactors(): the sum of each f × f cell of queries [r0, r1) × keys [c0, c1) of
    /// `head` into sums [ceil((r1 − r0) / f) × ceil((c1 − c0) / f)] (edge cells smaller).
    /// keepGoing(fraction done) is polled between blocks; false stops it and returns false.
    virtual bool cellSums(int head, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1, std::int64_t f,
                          double* sums, const std::function<bool(double)>& keepGoing) const;

protected:
    using AttentionWeights::AttentionWeights;
    bool visitRows(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const override;
};

}  // namespace attnscope::engine
