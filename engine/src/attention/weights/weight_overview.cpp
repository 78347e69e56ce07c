#include <attnscope/weight_overview.h>

#include "attention/weights/dense_row_weights.h"
#include "attention/weights/overview_cells.h"
#include "attention/weights/pattern_weights.h"
#include "base/runtime/huge_pages.h"
#include "base/runtime/worker_threads.h"

#include <algorithm>
#include <limits>

namespace attnscope::engine {
namespace {

// Rows per block between keepGoing polls (and, for dense rows, per tile): a tile of 16 rows of
// 128k keys is 8 MiB of weights.
constexpr std::int64_t kRowsPerBlock = 16;

// Whole cell rows of at least kRowsPerBlock queries.
std::int64_t rowsPerBlock(std::int64_t factor) { return (kRowsPerBlock + factor - 1) / factor * factor; }

// One cell row's dense weights pooled down each key's column (max, min and sum over the cell
// row's queries, and whether an allowed weight was exactly 0): straight loops over the keys that
// the compiler vectorises; the cells then take their keys' columns once per cell row.
struct ColumnPool {
    std::vector<float> hi, lo, sum;
    std::vector<std::uint8_t> zero;
    std::int64_t rowCell = -1;
    ReasonBits uniformReasons = 0;  ///< the reasons of the rows whose keys all share one

    void start(std::int64_t cellRow, std::int64_t width) {
        rowCell = cellRow;
        hi.assign(static_cast<std::size_t>(width), -std::numeric_limits<float>::infinity());
        lo.assign(static_cast<std::size_t>(width), std::numeric_limits<float>::infinity());
        sum.assign(static_cast<std::size_t>(width), 0.0f);
        zero.assign(static_cast<std::size_t>(width), 0);
        uniformReasons = 0;
    }
    void add(const float* w, std::int64_t width, bool zerosCount) {
        float* h = hi.data();
        float* l = lo.data();
        float* s = sum.data();
        for (std::int64_t j = 0; j < width; ++j) {
            h[j] = w[j] > h[j] ? w[j] : h[j];
            l[j] = w[j] < l[j] ? w[j] : l[j];
            s[j] += w[j];
        }
        if (!zerosCount) return;
        std::uint8_t* z = zero.data();
        for (std::int64_t j = 0; j < width; ++j) z[j] |= static_cast<std::uint8_t>(w[j] == 0.0f);
    }
    /// The cell row's cells take their keys' columns.
    void flush(WeightOverview& out) {
        if (rowCell < 0) return;
        const std::int64_t f = out.region.factor, width = static_cast<std::int64_t>(hi.size());
        for (int cb = 0; cb < out.cols; ++cb) {
            const std::size_t cell = static_cast<std::size_t>(rowCell) * static_cast<std::size_t>(out.cols) + static_cast<std::size_t>(cb);
            const std::int64_t j0 = cb * f, j1 = std::min(j0 + f, width);
            float h = out.maxWeight[cell], l = out.minWeight[cell];
            double total = 0;
            bool zeroSeen = false;
            for (std::int64_t j = j0; j < j1; ++j) {
                const auto k = static_cast<std::size_t>(j);
                h = hi[k] > h ? hi[k] : h;
                l = lo[k] < l ? lo[k] : l;
                total += sum[k];
                zeroSeen = zeroSeen || zero[k] != 0;
            }
            out.maxWeight[cell] = h;
            out.minWeight[cell] = l;
            out.sumWeight[cell] += total;
            out.reasons[cell] |= uniformReasons;
            if (zeroSeen) out.exactZero[cell] = 1;
        }
        rowCell = -1;
    }
};

// Whether every one of `count` values equals the first (a loop without early exit: vectorised).
template <typename T>
bool allEqual(const T* values, std::int64_t count) {
    unsigned differ = 0;
    for (std::int64_t j = 0; j < count; ++j) differ |= static_cast<unsigned>(values[j] ^ values[0]);
    return differ == 0;
}

// The reasons of one tile row whose keys differ in reasons or multiplicity (causal rows, windows
// inside a dense region), a cell at a time; its weights go through the column pool as any row's.
void addRowReasons(const WeightTile& t, std::int64_t i, WeightOverview& out, ReasonRuns& runs) {
    const OverviewRequest& r = out.region;
    const std::int64_t f = r.factor, width = r.c1 - r.c0;
    const std::size_t rowCell = static_cast<std::size_t>((i - r.r0) / f) * static_cast<std::size_t>(out.cols);
    const std::size_t base = static_cast<std::size_t>((i - t.r0) * t.cols() + (r.c0 - t.c0));
    const float* w = t.weights.data() + base;
    const ReasonBits* reasons = t.reasons.data() + base;
    const std::uint8_t* multiplicity = t.multiplicity.data() + base;
    for (int cb = 0; cb < out.cols; ++cb) {
        const std::size_t cell = rowCell + static_cast<std::size_t>(cb);
        const std::int64_t j0 = cb * f, j1 = std::min(j0 + f, width);
        ReasonBits bits = 0;
        bool zero = false;
        for (std::int64_t j = j0; j < j1; ++j) {
            if (reasons[j] == 0) continue;
            bits |= reasons[j];
            zero = zero || w[j] == 0.0f;
            runs.add(reasons[j], multiplicity[j]);
        }
        out.reasons[cell] |= bits;
        if (zero) out.exactZero[cell] = 1;
    }
}

// Dense rows: every key of a cell, a tile of kRowsPerBlock rows at a time, pooled down the
// columns of each cell row (ColumnPool). A row whose keys all share one reason set and
// multiplicity (every dense variant's row) counts them at once.
bool addDenseRows(const AttentionWeights& weights, WeightOverview& out, const std::function<bool(double)>& keepGoing) {
    const OverviewRequest& r = out.region;
    const std::int64_t width = r.c1 - r.c0;
    std::vector<ColumnPool> pools(static_cast<std::size_t>(std::max(kernelThreads(), 1)));
    return addRowsInBlocks(out, rowsPerBlock(r.factor), keepGoing, [&](std::int64_t i0, std::int64_t i1, ReasonEntries& entries, int worker) {
        ColumnPool& pool = pools[static_cast<std::size_t>(worker)];
        for (std::int64_t b0 = i0; b0 < i1; b0 += kRowsPerBlock) {
            const std::int64_t b1 = std::min(i1, b0 + kRowsPerBlock);
            const WeightTile t = weights.tile(r.head, b0, b1, r.c0, r.c1, /*withReasons=*/true);
            ReasonRuns runs(entries);
            for (std::int64_t i = b0; i < b1; ++i) {
                const std::int64_t cellRow = (i - r.r0) / r.factor;
                if (cellRow != pool.rowCell) {
                    pool.flush(out);
                    pool.start(cellRow, width);
                }
                const std::size_t base = static_cast<std::size_t>((i - t.r0) * t.cols() + (r.c0 - t.c0));
                const ReasonBits* reasons = t.reasons.data() + base;
                const std::uint8_t* multiplicity = t.multiplicity.data() + base;
                const bool uniform = width > 0 && allEqual(reasons, width) && allEqual(multiplicity, width);
                pool.add(t.weights.data() + base, width, uniform && reasons[0] != 0);
                if (uniform) {
                    countReasons(reasons[0], multiplicity[0], entries, width);
                    pool.uniformReasons |= reasons[0];
                } else {
                    addRowReasons(t, i, out, runs);
                }
            }
        }
        pool.flush(out);
    });
}

// Sparse rows: only the allowed keys, the others being 0.
bool addSparseRows(const AttentionWeights& weights, WeightOverview& out, const std::function<bool(double)>& keepGoing) {
    const OverviewRequest& r = out.region;
    return addRowsInBlocks(out, rowsPerBlock(r.factor), keepGoing, [&](std::int64_t i0, std::int64_t i1, ReasonEntries& entries, int) {
        weights.forEachRow(r.head, i0, i1, [&](const RowEntries& row) {
            addVisitedRow(out, row, entries);
            return true;
        });
    });
}

// Sums by factors (linear, performer): the cells' sums from the weights' own factors; every key of
// a cell allowed (Dense), or the keys j <= i (Causal); max and min not computed (NaN).
bool addFactoredSums(const DenseRowWeights& weights, WeightOverview& out, const std::function<bool(double)>& keepGoing) {
    const OverviewRequest& r = out.region;
    if (!weights.cellSums(r.head, r.r0, r.r1, r.c0, r.c1, r.factor, out.sumWeight.data(), keepGoing)) return false;
    std::fill(out.maxWeight.begin(), out.maxWeight.end(), std::numeric_limits<float>::quiet_NaN());
    std::fill(out.minWeight.begin(), out.minWeight.end(), std::numeric_limits<float>::quiet_NaN());
    const DenseRowWeights::FactoredRule rule = weights.factoredRule();
    for (int R = 0; R < out.rows; ++R) {
        const std::int64_t iLast = std::min(r.r1, r.r0 + (R + 1) * r.factor) - 1;
        for (int C = 0; C < out.cols; ++C)
            if (!rule.causal || r.c0 + C * r.factor <= iLast) out.reasons[static_cast<std::size_t>(R) * out.cols + C] = rule.reason;
    }
    std::int64_t entries = 0;
    for (std::int64_t i = r.r0; i < r.r1; ++i) entries += rule.causal ? std::clamp<std::int64_t>(i + 1, r.c0, r.c1) - r.c0 : r.c1 - r.c0;
    countReasons(rule.reason, 1, out.reasonEntries, entries);
    return true;
}

}  // namespace

bool poolsSumsByFactors(const AttentionWeights& weights) {
    const auto* dense = dynamic_cast<const DenseRowWeights*>(&weights);
    return dense && dense->sumsByFactors();
}

bool poolsByGroups(const AttentionWeights& weights, int head) {
    const auto* pattern = dynamic_cast<const PatternWeights*>(&weights);
    return pattern && head >= 0 && head < weights.heads() && pattern->groupPooling(head) != nullptr;
}

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
    // (a 2048² overview is 80 MB of fresh memory: on huge pages, a fault per 2 MiB)
    assignOnHugePages(out.maxWeight, cells, dense ? -std::numeric_limits<float>::infinity() : 0.0f);
    assignOnHugePages(out.minWeight, cells, dense ? std::numeric_limits<float>::infinity() : 0.0f);
    assignOnHugePages(out.sumWeight, cells, 0.0);
    assignOnHugePages(out.reasons, cells, ReasonBits{0});
    assignOnHugePages(out.exactZero, cells, std::uint8_t{0});
    if (cells == 0) return true;
    if (r.sumsOnly && poolsSumsByFactors(weights)) {
        if (!addFactoredSums(dynamic_cast<const DenseRowWeights&>(weights), out, keepGoing)) return false;
        return !keepGoing || keepGoing(1.0);
    }
    const auto* pattern = dynamic_cast<const PatternWeights*>(&weights);
    if (const auto pooling = pattern ? pattern->groupPooling(r.head) : nullptr) {
        if (!pattern->poolOverview(*pooling, out, keepGoing)) return false;
    } else if (!(dense ? addDenseRows(weights, out, keepGoing) : addSparseRows(weights, out, keepGoing))) {
        return false;
    }
    return !keepGoing || keepGoing(1.0);
}

}  // namespace attnscope::engine
