#pragma once
// One head's attention weights as a dense matrix for display: the whole head, block-pooled
// (max or mean) when large, or a full-resolution region of it (the zoomed-in heatmap).

#include "views/data/pool_mode.h"

#include <attnscope/types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace attnscope::views {

class HeadMatrix {
public:
    /// Largest side drawn cell by cell: QCPColorMap keeps a double per cell plus a cached image,
    /// so 2048² is already ~32 MB of doubles (FORMATS.md §5 "Large matrices").
    static constexpr int kMaxDisplaySide = 2048;

    /// weights of `head`: [rows, cols] = [ceil(n / f), ceil(m / f)] where the pool factor
    /// f = ceil(max(n, m) / maxSide); each cell holds the max (or the mean) over its f x f block;
    /// edge blocks are smaller and average over the cells they have. Keys listed twice in a
    /// pattern row count twice (same as AttentionResult::weightAt); keys outside the pattern count
    /// as 0. Rows without weights (empty rows, an out-of-range head) are zeros. Built from the
    /// result's overview (engine/weight_overview.h): O(the weights covered).
    /// keepGoing(fraction done) is polled between blocks of rows of a pooled head; when it
    /// returns false the build stops and complete() is false.
    static HeadMatrix fromResult(const engine::AttentionResult& result, int head, int maxSide = kMaxDisplaySide,
                                 PoolMode mode = PoolMode::Max, const std::function<bool(double)>& keepGoing = {});
    /// Queries [row0, row0 + rows) x keys [col0, col0 + cols) of `head` at full resolution
    /// (poolFactor() 1), clamped to the matrix: one tile of the result's weights.
    static HeadMatrix fromRegion(const engine::AttentionResult& result, int head, std::int64_t row0, std::int64_t col0,
                                 std::int64_t rows, std::int64_t cols);
    /// fromRegion() that takes over `spare`'s storage (left empty), so a heatmap that moves its
    /// zoomed region does not allocate and fault in fresh pages for every new region.
    static HeadMatrix fromRegion(const engine::AttentionResult& result, int head, std::int64_t row0, std::int64_t col0,
                                 std::int64_t rows, std::int64_t cols, HeadMatrix&& spare);

    /// An empty matrix owning zeroed storage for `cells` values (faulted in by whoever calls it),
    /// to be handed to fromRegion() as its spare.
    static HeadMatrix storageFor(std::size_t cells);

    int rows() const { return m_rows; }
    int cols() const { return m_cols; }
    /// Input indices of cell (0, 0)'s first query and key (non-zero for regions).
    std::int64_t rowOffset() const { return m_rowOffset; }
    std::int64_t colOffset() const { return m_colOffset; }
    int poolFactor() const { return m_poolFactor; }
    PoolMode poolMode() const { return m_poolMode; }
    /// False when a build was stopped by its keepGoing before the end (the values are partial).
    bool complete() const { return m_complete; }
    /// False when the result has no weights (the matrix is all zeros then).
    bool hasWeights() const { return m_hasWeights; }
    float maxValue() const { return m_max; }
    float minValue() const { return m_min; }
    /// Smallest value > 0, or 0 when there is none (the log scale's natural floor).
    float minPositive() const { return m_minPositive; }
    float at(int row, int col) const { return m_values[static_cast<std::size_t>(row) * m_cols + col]; }
    const std::vector<float>& values() const { return m_values; }
    /// False when the result's pattern excludes every (query, key) of the cell, so views can tell
    /// "not attended" from "attended with weight ~0". Always true when the pattern allows all keys.
    bool inPattern(int row, int col) const {
        return m_inPattern.empty() || m_inPattern[static_cast<std::size_t>(row) * m_cols + col] != 0;
    }
    /// True when some cell is outside the pattern.
    bool hasMaskedCells() const { return m_hasMaskedCells; }

private:
    /// Pools queries [r0, r0 + nr) x keys [c0, c0 + nc) by f.
    static HeadMatrix build(const engine::AttentionResult& result, int head, std::int64_t r0, std::int64_t c0,
                            std::int64_t nr, std::int64_t nc, std::int64_t f, PoolMode mode,
                            HeadMatrix* spare = nullptr, const std::function<bool(double)>& keepGoing = {});
    /// Cells whose keys are all outside the pattern (reasons 0) are marked out of it.
    void markPattern(const std::vector<engine::ReasonBits>& reasons);

    bool m_complete = true;
    int m_rows = 0;
    int m_cols = 0;
    std::int64_t m_rowOffset = 0;
    std::int64_t m_colOffset = 0;
    int m_poolFactor = 1;
    PoolMode m_poolMode = PoolMode::Max;
    bool m_hasWeights = false;
    float m_max = 0.0f;
    float m_min = 0.0f;
    float m_minPositive = 0.0f;
    bool m_hasMaskedCells = false;
    std::vector<float> m_values;            // [m_rows, m_cols] row-major
    std::vector<std::uint8_t> m_inPattern;  // [m_rows, m_cols]; empty = every cell is in the pattern
};

}  // namespace attnscope::views
