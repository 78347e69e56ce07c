#pragma once
// What every way of building an overview (weight_overview.cpp: tiles and row visits;
// pattern_overview.cpp: a pattern's groups) does to its cells: a weight into its cell, reasons
// counted by runs, and rows pooled on the kernels' threads in blocks of whole cell rows.

#include <attnscope/weight_overview.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>

namespace attnscope::engine {

using ReasonEntries = std::array<std::int64_t, kPatternReasonCount>;

/// `keys` keys with the same reasons and multiplicity: each counts once per reason, and a key listed
/// more often than it has reasons counts the extra listings under its first reason.
void countReasons(ReasonBits bits, int multiplicity, ReasonEntries& entries, std::int64_t keys = 1);

/// Runs of keys with the same reasons and multiplicity (a dense row is one run), counted at once.
class ReasonRuns {
public:
    explicit ReasonRuns(ReasonEntries& entries) : m_entries(entries) {}
    ~ReasonRuns() { flush(); }
    ReasonRuns(const ReasonRuns&) = delete;
    ReasonRuns& operator=(const ReasonRuns&) = delete;
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

/// One allowed key's weight into its cell (its reasons counted by the caller).
inline void addKey(WeightOverview& out, std::size_t cell, float w, ReasonBits bits) {
    out.maxWeight[cell] = std::max(out.maxWeight[cell], w);
    out.minWeight[cell] = std::min(out.minWeight[cell], w);
    out.sumWeight[cell] += w;
    if (bits == 0) return;
    out.reasons[cell] |= bits;
    if (w == 0.0f) out.exactZero[cell] = 1;
}

/// One visited row's allowed keys in the region into their cells, its reasons into `entries`.
void addVisitedRow(WeightOverview& out, const RowEntries& row, ReasonEntries& entries);

/// Queries of the region in blocks of `blockRows` (a multiple of the factor, so that no two blocks
/// share a cell) on the kernels' threads, each thread counting reasons apart, summed into
/// out.reasonEntries at the end; keepGoing polled by the calling thread alone, its "stop" seen by
/// every thread before its next block. addRows(i0, i1, entries, worker) adds queries [i0, i1).
/// Blocks depend on the region alone, so each cell's keys arrive in the same order on any number
/// of threads. Returns false when stopped.
bool addRowsInBlocks(WeightOverview& out, std::int64_t blockRows, const std::function<bool(double)>& keepGoing,
                     const std::function<void(std::int64_t i0, std::int64_t i1, ReasonEntries& entries, int worker)>& addRows);

}  // namespace attnscope::engine
