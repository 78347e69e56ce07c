#include "attention/weights/sparse_row_weights.h"

#include <algorithm>

namespace attnscope::engine {

void SparseRowWeights::mergeListing(Scratch& s) { mergeKeyListing(s.sort, s.keys); }

std::int64_t SparseRowWeights::entries(int head) const {
    Scratch s;
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < queries(); ++i) {
        rowKeys(head, i, s);
        for (std::uint8_t c : s.keys.multiplicity) total += c;
    }
    return total;
}

void SparseRowWeights::fillTile(WeightTile& out) const {
    Scratch s;
    const std::int64_t cols = out.cols();
    const bool reasons = !out.reasons.empty();
    for (std::int64_t i = out.r0; i < out.r1; ++i) {
        rowKeys(out.head, i, s);
        const auto& keys = s.keys.keys;
        const auto t0 = std::lower_bound(keys.begin(), keys.end(), static_cast<std::int32_t>(out.c0)) - keys.begin();
        const auto t1 = std::lower_bound(keys.begin(), keys.end(), static_cast<std::int32_t>(out.c1)) - keys.begin();
        if (t0 >= t1) continue;
        s.weights.resize(keys.size());
        rowWeights(out.head, i, s, t0, t1);
        const std::size_t rowBase = static_cast<std::size_t>((i - out.r0) * cols);
        for (auto t = t0; t < t1; ++t) {
            const std::size_t cell = rowBase + static_cast<std::size_t>(keys[static_cast<std::size_t>(t)] - out.c0);
            out.weights[cell] = s.weights[static_cast<std::size_t>(t)];
            if (reasons) {
                out.reasons[cell] = s.keys.reasons[static_cast<std::size_t>(t)];
                out.multiplicity[cell] = s.keys.multiplicity[static_cast<std::size_t>(t)];
            }
        }
    }
}

bool SparseRowWeights::visitRows(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const {
    Scratch s;
    for (std::int64_t i = r0; i < r1; ++i) {
        rowKeys(head, i, s);
        const auto count = static_cast<std::int64_t>(s.keys.keys.size());
        s.weights.resize(static_cast<std::size_t>(count));
        if (count > 0) rowWeights(head, i, s, 0, count);
        RowEntries row;
        row.query = i;
        row.count = count;
        row.keys = s.keys.keys.data();
        row.weights = s.weights.data();
        row.reasons = s.keys.reasons.data();
        row.multiplicity = s.keys.multiplicity.data();
        if (!visit(row)) return false;
    }
    return true;
}

}  // namespace attnscope::engine
