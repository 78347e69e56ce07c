#include "attention/weights/dense_row_weights.h"

#include <algorithm>
#include <vector>

namespace attnscope::engine {

bool DenseRowWeights::visitRows(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const {
    // Whole rows a few at a time: 8 rows of 128k keys are 4 MiB of weights and 2 MiB of reasons.
    constexpr std::int64_t kRowsPerTile = 8;
    std::vector<std::int32_t> keys;
    std::vector<float> weights;
    std::vector<ReasonBits> reasons;
    std::vector<std::uint8_t> multiplicity;
    const std::int64_t m = this->keys();
    for (std::int64_t i0 = r0; i0 < r1; i0 += kRowsPerTile) {
        const std::int64_t i1 = std::min(r1, i0 + kRowsPerTile);
        const WeightTile t = tile(head, i0, i1, 0, m, /*withReasons=*/true);
        for (std::int64_t i = i0; i < i1; ++i) {
            keys.clear();
            weights.clear();
            reasons.clear();
            multiplicity.clear();
            const std::size_t base = static_cast<std::size_t>((i - i0) * m);
            for (std::int64_t j = 0; j < m; ++j) {
                if (t.reasons[base + static_cast<std::size_t>(j)] == 0) continue;
                keys.push_back(static_cast<std::int32_t>(j));
                weights.push_back(t.weights[base + static_cast<std::size_t>(j)]);
                reasons.push_back(t.reasons[base + static_cast<std::size_t>(j)]);
                multiplicity.push_back(t.multiplicity[base + static_cast<std::size_t>(j)]);
            }
            RowEntries row;
            row.query = i;
            row.count = static_cast<std::int64_t>(keys.size());
            row.keys = keys.data();
            row.weights = weights.data();
            row.reasons = reasons.data();
            row.multiplicity = multiplicity.data();
            if (!visit(row)) return false;
        }
    }
    return true;
}

}  // namespace attnscope::engine

namespace attnscope::engine {

bool DenseRowWeights::cellSums(int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, double*,
                               const std::function<bool(double)>&) const {
    return false;
}

}  // namespace attnscope::engine
