#include "attention/weights/overview_cells.h"

#include "base/runtime/worker_threads.h"

#include <atomic>
#include <vector>

namespace attnscope::engine {

void countReasons(ReasonBits bits, int multiplicity, ReasonEntries& entries, std::int64_t keys) {
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

void addVisitedRow(WeightOverview& out, const RowEntries& row, ReasonEntries& entries) {
    const OverviewRequest& r = out.region;
    const std::int64_t f = r.factor;
    const double perCell = 1.0 / static_cast<double>(f);
    const std::size_t rowCells = static_cast<std::size_t>((row.query - r.r0) / f) * static_cast<std::size_t>(out.cols);
    ReasonRuns runs(entries);
    const std::int32_t* begin = std::lower_bound(row.keys, row.keys + row.count, static_cast<std::int32_t>(r.c0));
    for (const std::int32_t* k = begin; k < row.keys + row.count && *k < r.c1; ++k) {
        const auto t = static_cast<std::size_t>(k - row.keys);
        // (key − c0) / f without an integer division a key: the product's floor, corrected
        const std::int64_t offset = *k - r.c0;
        auto column = static_cast<std::int64_t>(static_cast<double>(offset) * perCell);
        if (column * f > offset) --column;
        else if ((column + 1) * f <= offset) ++column;
        addKey(out, rowCells + static_cast<std::size_t>(column), row.weights[t], row.reasons[t]);
        if (row.reasons[t] != 0) runs.add(row.reasons[t], row.multiplicity[t]);
    }
}

bool addRowsInBlocks(WeightOverview& out, std::int64_t blockRows, const std::function<bool(double)>& keepGoing,
                     const std::function<void(std::int64_t i0, std::int64_t i1, ReasonEntries& entries, int worker)>& addRows) {
    const OverviewRequest& r = out.region;
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
        addRows(i0, i1, entries[static_cast<std::size_t>(worker)], worker);
        done.fetch_add(1);
    });
    if (stopped.load()) return false;
    for (const ReasonEntries& part : entries)
        for (std::size_t k = 0; k < part.size(); ++k) out.reasonEntries[k] += part[k];
    return true;
}

}  // namespace attnscope::engine
