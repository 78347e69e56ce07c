#include <attnscope/weight_overview.h>

#include "base/runtime/worker_threads.h"

#include <algorithm>
#include <atomic>
#include <limits>

namespace attnscope::engine {
namespace {

// Rows per block between keepGoing polls (and, for dense rows, per tile): a tile of 16 rows of
// 128k keys is 8 MiB of weights.
constexpr std::int64_t kRowsPerBlock = 16;

using ReasonEntries = std::array<std::int64_t, kPatternReasonCount>;

// `keys` keys with the same reasons and multiplicity: each counts once per reason, and a key listed
// more often than it has reasons counts the extra listings under its first reason.
void countReasons(ReasonBits bits, int multiplicity, ReasonEntries& entries, std::int64_t keys = 1) {
    int first = -1, counted = 0;
    for (int r = 0; r < kPatternReasonCount; ++r)
        if (bits & (1u << r)) {
            if (first < 0) first = r;
            entries[static_cast<std::size_t>(r)] += keys;
            ++counted;
        }
    if (first >= 0 && multiplicity > counted)
        entries[static_cast<std::size_t>(first)] += keys * (multiplicity - counted);
}

// Runs of keys with the same reasons and multiplicity (a dense row is one run), counted at once.
class ReasonRuns {
public:
    explicit ReasonRuns(ReasonEntries& entries) : m_entries(entries) {}
    ~ReasonRuns() { flush(); }
    void add(ReasonBits bits, int multiplicity) {
        if (bits == m_bits && multiplicity == m_multiplicity) {
            ++m_keys;
            return;
        }
        flush();
        m_bits = bits;
        m_multiplicity = multiplicity;
        m_keys = 1;
    }

private:
    void flush() {
        if (m_keys > 0 && m_bits != 0) countReasons(m_bits, m_multiplicity, m_entries, m_keys);
        m_keys = 0;
    }
    ReasonEntries& m_entries;
    ReasonBits m_bits = 0;
    int m_multiplicity = 0;
    std::int64_t m_keys = 0;
};

// One tile row of dense weights into its row of cells, a cell (f keys) at a time. A row whose keys
// all share one reason set and multiplicity (every dense variant's row) counts them at once.
void addDenseRow(const WeightTile& t, std::int64_t i, WeightOverview& out, ReasonEntries& entries, ReasonRuns& runs) {
    const OverviewRequest& r = out.region;
    const std::int64_t f = r.factor, width = r.c1 - r.c0;
    const std::size_t rowCell = static_cast<std::size_t>((i - r.r0) / f) * static_cast<std::size_t>(out.cols);
    const std::size_t base = static_cast<std::size_t>((i - t.r0) * t.cols() + (r.c0 - t.c0));
    const float* w = t.weights.data() + base;
    const ReasonBits* reasons = t.reasons.data() + base;
    const std::uint8_t* multiplicity = t.multiplicity.data() + base;
    const bool uniform = std::all_of(reasons, reasons + width, [&](ReasonBits b) { return b == reasons[0]; }) &&
                         std::all_of(multiplicity, multiplicity + width, [&](std::uint8_t c) { return c == multiplicity[0]; });
    if (uniform && width > 0) countReasons(reasons[0], multiplicity[0], entries, width);
    for (int cb = 0; cb < out.cols; ++cb) {
        const std::size_t cell = rowCell + static_cast<std::size_t>(cb);
        const std::int64_t j0 = cb * f, j1 = std::min(j0 + f, width);
        float hi = out.maxWeight[cell], lo = out.minWeight[cell], sum = 0;  // (f keys: a float sum)
        int zeros = 0;
        for (std::int64_t j = j0; j < j1; ++j) {
            hi = w[j] > hi ? w[j] : hi;
            lo = w[j] < lo ? w[j] : lo;
            sum += w[j];
            zeros += w[j] == 0.0f;
        }
        out.maxWeight[cell] = hi;
        out.minWeight[cell] = lo;
        out.sumWeight[cell] += sum;
        if (uniform) {
            if (reasons[0] == 0) continue;
            out.reasons[cell] |= reasons[0];
            if (zeros > 0) out.exactZero[cell] = 1;
            continue;
        }
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

void addKey(WeightOverview& out, std::size_t cell, float w, ReasonBits bits, int multiplicity, ReasonEntries& entries) {
    out.maxWeight[cell] = std::max(out.maxWeight[cell], w);
    out.minWeight[cell] = std::min(out.minWeight[cell], w);
    out.sumWeight[cell] += w;
    if (bits == 0) return;
    out.reasons[cell] |= bits;
    if (w == 0.0f) out.exactZero[cell] = 1;
    countReasons(bits, multiplicity, entries);
}

// Rows on the kernels' threads: blocks of whole cell rows (so no two threads share a cell), each
// thread counting reasons apart, summed at the end; keepGoing polled by the calling thread alone,
// its "stop" seen by every thread before its next block. `addRows(i0, i1, entries)` adds queries
// [i0, i1).
bool addRowsInBlocks(WeightOverview& out, const std::function<bool(double)>& keepGoing,
                     const std::function<void(std::int64_t i0, std::int64_t i1, ReasonEntries& entries)>& addRows) {
    const OverviewRequest& r = out.region;
    const std::int64_t blockRows = (kRowsPerBlock + r.factor - 1) / r.factor * r.factor;
    const std::int64_t blocks = (r.r1 - r.r0 + blockRows - 1) / blockRows;
    std::vector<ReasonEntries> entries(static_cast<std::size_t>(std::max(kernelThreads(), 1)), ReasonEntries{});
    std::atomic<bool> stopped{false};
    std::atomic<std::int64_t> done{0};
    forEachItem(blocks, [&](std::int64_t block, int worker) {
        if (stopped.load(std::memory_order_relaxed)) return;
        if (worker == 0 && keepGoing && !keepGoing(static_cast<double>(done.load()) / static_cast<double>(blocks))) {
            stopped.store(true);
            return;
        }
        const std::int64_t i0 = r.r0 + block * blockRows, i1 = std::min(r.r1, i0 + blockRows);
        addRows(i0, i1, entries[static_cast<std::size_t>(worker)]);
        done.fetch_add(1);
    });
    if (stopped.load()) return false;
    for (const ReasonEntries& part : entries)
        for (std::size_t k = 0; k < part.size(); ++k) out.reasonEntries[k] += part[k];
    return true;
}

// Dense rows: every key of a cell, a tile of kRowsPerBlock rows at a time.
bool addDenseRows(const AttentionWeights& weights, WeightOverview& out, const std::function<bool(double)>& keepGoing) {
    const OverviewRequest& r = out.region;
    return addRowsInBlocks(out, keepGoing, [&](std::int64_t i0, std::int64_t i1, ReasonEntries& entries) {
        for (std::int64_t b0 = i0; b0 < i1; b0 += kRowsPerBlock) {
            const std::int64_t b1 = std::min(i1, b0 + kRowsPerBlock);
            const WeightTile t = weights.tile(r.head, b0, b1, r.c0, r.c1, /*withReasons=*/true);
            ReasonRuns runs(entries);
            for (std::int64_t i = b0; i < b1; ++i) addDenseRow(t, i, out, entries, runs);
        }
    });
}

// Sparse rows: only the allowed keys, the others being 0.
bool addSparseRows(const AttentionWeights& weights, WeightOverview& out, const std::function<bool(double)>& keepGoing) {
    const OverviewRequest& r = out.region;
    return addRowsInBlocks(out, keepGoing, [&](std::int64_t i0, std::int64_t i1, ReasonEntries& entries) {
        weights.forEachRow(r.head, i0, i1, [&](const RowEntries& row) {
            const std::int32_t* begin = std::lower_bound(row.keys, row.keys + row.count, static_cast<std::int32_t>(r.c0));
            for (const std::int32_t* k = begin; k < row.keys + row.count && *k < r.c1; ++k) {
                const auto t = static_cast<std::size_t>(k - row.keys);
                addKey(out, out.cell(row.query, *k), row.weights[t], row.reasons[t], row.multiplicity[t], entries);
            }
            return true;
        });
    });
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
    if (!(dense ? addDenseRows(weights, out, keepGoing) : addSparseRows(weights, out, keepGoing))) return false;
    return !keepGoing || keepGoing(1.0);
}

}  // namespace attnscope::engine
