#pragma once
// The weights of variants whose rows allow a few keys each (the pattern variants, star, topk,
// reformer, routing): a row's keys come from the variant's definition, its weights from the kept
// statistics; tiles and row visits are built from those two steps.

#include "attention/pattern/block_pattern.h"

#include <attnscope/attention_weights.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace attnscope::engine {

/// A variant's own per-call buffers beyond the common ones (Routing's scored entries,
/// Reformer's candidates): made on first use by SparseRowWeights::Scratch::own<T>().
struct RowWeightsOwnScratch {
    virtual ~RowWeightsOwnScratch() = default;
};

class SparseRowWeights : public AttentionWeights {
public:
    bool denseRows() const override { return false; }
    /// From the rows' keys alone (no weights).
    std::int64_t entries(int head) const override;

protected:
    using AttentionWeights::AttentionWeights;

    /// Per-call buffers (the weights are shared between threads; nothing mutable lives in them).
    struct Scratch {
        RowKeys keys;
        std::vector<std::pair<std::int32_t, std::uint8_t>> sort;
        std::vector<float> weights, scores;
        std::unique_ptr<RowWeightsOwnScratch> variantOwn;
        /// The variant's buffers of type T (derived from RowWeightsOwnScratch). One Scratch serves one
        /// variant's weights, so the type never changes once made.
        template <class T>
        T& own() {
            if (!variantOwn) variantOwn = std::make_unique<T>();
            return static_cast<T&>(*variantOwn);
        }
    };
    /// Fills s.keys with the allowed keys of (head, i): ascending, distinct, with multiplicities
    /// and reason bits.
    virtual void rowKeys(int head, std::int64_t i, Scratch& s) const = 0;
    /// s.weights[t] for the keys t in [t0, t1) of s.keys (s.weights is sized to the row). Softmax
    /// rows compute every key of the row and normalise over them (self-consistent float weights,
    /// summing to 1 as the kernel's did), so [t0, t1) only says which ones are needed.
    virtual void rowWeights(int head, std::int64_t i, Scratch& s, std::int64_t t0, std::int64_t t1) const = 0;

    /// s.sort's (key, reason) listing, in any order, into s.keys: ascending and distinct, a key
    /// listed c times with multiplicity c (at most 255) and the OR of its reasons.
    static void mergeListing(Scratch& s);

    void fillTile(WeightTile& out) const override;
    bool visitRows(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const override;
};

}  // namespace attnscope::engine
