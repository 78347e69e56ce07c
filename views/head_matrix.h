#pragma once
// One head's attention weights as a dense matrix for display, max-pooled when large.

#include <attnscope/types.h>

#include <cstdint>
#include <vector>

namespace attnscope::views {

class HeadMatrix {
public:
    /// Largest side drawn cell by cell: QCPColorMap keeps a double per cell plus a cached image,
    /// so 2048² is already ~32 MB of doubles (FORMATS.md §5 "Large matrices").
    static constexpr int kMaxDisplaySide = 2048;

    /// weights of `head`: [rows, cols] = [ceil(n / f), ceil(m / f)] where the pool factor
    /// f = ceil(max(n, m) / maxSide); each cell holds the max over its f x f block. Keys listed
    /// twice in a pattern row count twice (same as AttentionResult::weightAt). Rows without weights
    /// (empty rows, WeightsLayout::None, an out-of-range head) are zeros.
    static HeadMatrix fromResult(const engine::AttentionResult& result, int head, int maxSide = kMaxDisplaySide);

    int rows() const { return m_rows; }
    int cols() const { return m_cols; }
    int poolFactor() const { return m_poolFactor; }
    /// False when the result kept no weights (the matrix is all zeros then).
    bool hasWeights() const { return m_hasWeights; }
    float maxValue() const { return m_max; }
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
    void markPattern(const engine::SparsePattern& pattern, int head, std::int64_t n, std::int64_t m);

    int m_rows = 0;
    int m_cols = 0;
    int m_poolFactor = 1;
    bool m_hasWeights = false;
    float m_max = 0.0f;
    bool m_hasMaskedCells = false;
    std::vector<float> m_values;            // [m_rows, m_cols] row-major
    std::vector<std::uint8_t> m_inPattern;  // [m_rows, m_cols]; empty = every cell is in the pattern
};

}  // namespace attnscope::views
