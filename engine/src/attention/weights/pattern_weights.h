#pragma once
// Weights of the softmax pattern variants (sparse_strided, sparse_fixed, longformer, bigbird,
// star): w(i, j) = c · exp(s_ij − shift_i) / sum_i with s = q·k / sqrt(d), for the keys j the
// pattern allows row i (listed c times); 0 for padded keys and for empty or padded rows (stats
// row_sum 0). The row's shift and sum are those of its own recomputed scores, which the kept
// statistics (row_max, row_sum: the kernel's) equal to float rounding: weights computed against the
// kernel's sum from rescored keys would carry both roundings (1e-6 at scores near 10).

#include "attention/pattern/block_pattern.h"
#include "attention/weights/kept_state.h"
#include "attention/weights/pattern_overview.h"
#include "attention/weights/sparse_row_weights.h"

#include <attnscope/attention_weights.h>

#include <memory>
#include <mutex>
#include <vector>

namespace attnscope::engine {

class PatternWeights final : public SparseRowWeights {
public:
    /// q: [H, n, d]; k: [H, m, d], or [H, m - 1, d] when the last key is the relay (the mean of
    /// the keys, Star-Transformer); shift, sum: F32 [H, n]. The pattern may be longer than n (BigBird's
    /// padding): its rows from n on and its keys from m on are left out.
    PatternWeights(BlockPattern pattern, SharedFloats q, SharedFloats k, std::int64_t m, std::vector<float> shift,
                   std::vector<float> sum, std::vector<std::uint8_t> keyPadding, std::vector<std::uint8_t> queryPadding);

    /// From the pattern's segments (no keys listed).
    std::int64_t entries(int head) const override;

    /// How the head's overview is pooled group by group (pattern_overview.h), made on first use;
    /// null where its rows must be visited instead (Star's relay key, rows split over groups).
    std::shared_ptr<const GroupPooling> groupPooling(int head) const;
    /// Fills `out` (region set, cells zeroed) by that pooling; false when keepGoing stopped it.
    bool poolOverview(const GroupPooling& pooling, WeightOverview& out, const std::function<bool(double)>& keepGoing) const;

private:
    void rowKeys(int head, std::int64_t i, Scratch& s) const override;
    void rowWeights(int head, std::int64_t i, Scratch& s, std::int64_t t0, std::int64_t t1) const override;
    const PatternRows& rowsOf(int head) const;

    BlockPattern m_pattern;
    SharedFloats m_q, m_k;
    std::vector<float> m_shift, m_sum;
    std::vector<std::uint8_t> m_keyPadding, m_queryPadding;
    std::int64_t m_d = 0, m_realKeys = 0;
    float m_scale = 1.0f;
    std::vector<float> m_relay;  ///< [H, d] the relay key per head (empty without one)
    mutable std::mutex m_mutex;  ///< guards the lazily built row indexes
    mutable std::vector<std::shared_ptr<const PatternRows>> m_rows;
    mutable std::vector<std::shared_ptr<const GroupPooling>> m_poolings;
    mutable std::vector<std::uint8_t> m_poolingMade;  ///< [heads] 1 once groupPooling(head) has looked
};

/// A pattern variant's weights from its kept row statistics (row_max, row_sum [H, n]) and its
/// pattern over `keys` keys (n, or n + 1 with Star's relay) with the keys' padding.
std::shared_ptr<const AttentionWeights> makePatternWeights(BlockPattern pattern, const KeptState& state, std::int64_t keys,
                                                           std::vector<std::uint8_t> keyPadding);

}  // namespace attnscope::engine
