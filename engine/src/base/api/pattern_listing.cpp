#include "base/api/pattern_listing.h"

#include <string>

namespace attnscope::engine {
namespace {

// The reasons of one entry repeated `count` times: each listed reason once, the first for the rest.
template <class Add>
void expandEntry(std::int32_t key, ReasonBits bits, int count, Add add) {
    int first = -1, emitted = 0;
    for (int r = 0; r < kPatternReasonCount && emitted < count; ++r)
        if (bits & (1u << r)) {
            if (first < 0) first = r;
            add(key, static_cast<std::uint8_t>(r));
            ++emitted;
        }
    for (; emitted < count; ++emitted) add(key, static_cast<std::uint8_t>(first < 0 ? 0 : first));
}

}  // namespace

std::int64_t patternEntryCount(const AttentionWeights& weights) {
    std::int64_t total = 0;
    for (int h = 0; h < weights.heads(); ++h) total += weights.entries(h);
    return total;
}

Result<SparsePattern> listPattern(const AttentionWeights& weights, std::uint64_t budgetBytes) {
    const std::int64_t entries = patternEntryCount(weights);
    const std::uint64_t bytes = static_cast<std::uint64_t>(entries) * 13 +
                                static_cast<std::uint64_t>(weights.heads() * weights.queries() + 1) * 8;
    if (bytes > budgetBytes)
        return makeError(ErrorCode::OutOfBudget, "the pattern listing has " + std::to_string(entries) + " entries (" +
                                                     std::to_string(bytes) + " bytes), over the memory budget of " +
                                                     std::to_string(budgetBytes) +
                                                     " bytes; leave out --write-pattern or use a shorter input");
    SparsePattern out;
    out.rows = weights.queries();
    out.cols = weights.keys();
    out.perHead = true;
    out.rowPtr.reserve(static_cast<std::size_t>(weights.heads() * out.rows + 1));
    out.colIdx.reserve(static_cast<std::size_t>(entries));
    out.reason.reserve(static_cast<std::size_t>(entries));
    out.rowPtr.push_back(0);
    for (int h = 0; h < weights.heads(); ++h)
        weights.forEachRow(h, 0, out.rows, [&](const RowEntries& row) {
            for (std::int64_t t = 0; t < row.count; ++t)
                expandEntry(row.keys[t], row.reasons[t], row.multiplicity[t], [&](std::int32_t key, std::uint8_t why) {
                    out.colIdx.push_back(key);
                    out.reason.push_back(why);
                });
            out.rowPtr.push_back(out.nnz());
            return true;
        });
    return out;
}

}  // namespace attnscope::engine
