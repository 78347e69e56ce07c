#include <attnscope/weight_overview.h>

#include <algorithm>
#include <limits>

namespace attnscope::engine {
namespace {

// Rows per block between keepGoing polls (and, for dense rows, per tile): a tile of 16 rows of
// 128k keys is 8 MiB of weights.
constexpr std::int64_t kRowsPerBlock = 16;

void countReasons(ReasonBits bits, int multiplicity, WeightOverview& out) {
    int first = -1, counted = 0;
    for (int r = 0; r < kPatternReasonCount; ++r)
        if (bits & (1u << r)) {
            if (first < 0) first = r;
            ++out.reasonEntries[static_cast<std::size_t>(r)];
            ++counted;
        }
    if (first >= 0 && multiplicity > counted) out.reasonEntries[static_cast<std::size_t>(first)] += multiplicity - counted;
}

void addKey(WeightOverview& out, std::size_t cell, float w, ReasonBits bits, int multiplicity) {
    out.maxWeight[cell] = std::max(out.maxWeight[cell], w);
    out.minWeight[cell] = std::min(out.minWeight[cell], w);
    out.sumWeight[cell] += w;
    if (bits == 0) return;
    out.reasons[cell] |= bits;
    if (w == 0.0f) out.exactZero[cell] = 1;
    countReasons(bits, multiplicity, out);
}

}  // namespace

std::int64_t WeightOverview::cellArea(int row, int col) const {
    const std::int64_t f = region.factor;
    const std::int64_t h = std::min(f, region.r1 - region.r0 - static_cast<std::int64_t>(row) * f);
    const std::int64_t w = std::min(f, region.c1 - region.c0 - static_cast<std::int64_t>(col) * f);
    return std::max<std::int64_t>(h, 0) * std::max<std::int64_t>(w, 0);
}

bool buildOverview(const AttentionWeights& weights, const OverviewRequest& request, WeightOverview& out,
                   const std::function<bool(double)>& keepGoing) {
    OverviewRequest r = request;
    r.r0 = std::clamp<std::int64_t>(r.r0, 0, weights.queries());
    r.r1 = std::clamp<std::int64_t>(r.r1, r.r0, weights.queries());
    r.c0 = std::clamp<std::int64_t>(r.c0, 0, weights.keys());
    r.c1 = std::clamp<std::int64_t>(r.c1, r.c0, weights.keys());
    r.factor = std::max<std::int64_t>(r.factor, 1);
    out = WeightOverview{};
    out.region = r;
    out.rows = static_cast<int>((r.r1 - r.r0 + r.factor - 1) / r.factor);
    out.cols = static_cast<int>((r.c1 - r.c0 + r.factor - 1) / r.factor);
    const auto cells = static_cast<std::size_t>(out.rows) * static_cast<std::size_t>(out.cols);
    const bool dense = weights.denseRows();
    // Dense rows visit every key of a cell; sparse rows only the allowed ones, the others being 0.
    out.maxWeight.assign(cells, dense ? -std::numeric_limits<float>::infinity() : 0.0f);
    out.minWeight.assign(cells, dense ? std::numeric_limits<float>::infinity() : 0.0f);
    out.sumWeight.assign(cells, 0.0);
    out.reasons.assign(cells, 0);
    out.exactZero.assign(cells, 0);
    if (cells == 0) return true;
    const double total = static_cast<double>(r.r1 - r.r0);
    for (std::int64_t i0 = r.r0; i0 < r.r1; i0 += kRowsPerBlock) {
        if (keepGoing && !keepGoing(static_cast<double>(i0 - r.r0) / total)) return false;
        const std::int64_t i1 = std::min(r.r1, i0 + kRowsPerBlock);
        if (dense) {
            const WeightTile t = weights.tile(r.head, i0, i1, r.c0, r.c1, /*withReasons=*/true);
            const std::int64_t cols = t.cols();
            for (std::int64_t i = i0; i < i1; ++i)
                for (std::int64_t j = r.c0; j < r.c1; ++j) {
                    const std::size_t at = static_cast<std::size_t>((i - i0) * cols + (j - r.c0));
                    addKey(out, out.cell(i, j), t.weights[at], t.reasons[at], t.multiplicity[at]);
                }
            continue;
        }
        weights.forEachRow(r.head, i0, i1, [&](const RowEntries& row) {
            const std::int32_t* begin = std::lower_bound(row.keys, row.keys + row.count, static_cast<std::int32_t>(r.c0));
            for (const std::int32_t* k = begin; k < row.keys + row.count && *k < r.c1; ++k) {
                const auto t = static_cast<std::size_t>(k - row.keys);
                addKey(out, out.cell(row.query, *k), row.weights[t], row.reasons[t], row.multiplicity[t]);
            }
            return true;
        });
    }
    if (keepGoing && !keepGoing(1.0)) return false;
    return true;
}

}  // namespace attnscope::engine
