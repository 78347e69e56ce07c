#pragma once
// One head's sparse pattern for display: the reason of each (query, key) cell, pooled when large,
// plus the per-query row summary of the mask view's row panel.

#include <attnscope/types.h>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace attnscope::views {

/// What the row panel shows for one (head, query). Keys listed twice in the pattern appear once
/// here; their weights are summed (AttentionResult::weightAt does the same).
struct MaskRowSummary {
    std::int64_t query = -1;
    std::vector<int> allowedKeys;                 ///< distinct keys, ascending
    std::vector<engine::PatternReason> reasons;   ///< per allowed key, as the mask view shows it
    std::vector<int> multiplicity;                ///< per allowed key: times listed (>= 1)
    std::vector<float> weights;                   ///< per allowed key, summed; empty without weights
    std::int64_t entries = 0;                     ///< listed entries, duplicates included
    int exactZeros = 0;                           ///< allowed keys whose weight is exactly 0.0f
    /// −Σ w ln w over allowed keys with w > 0, in nats; NaN when the result kept no weights.
    double entropy = std::numeric_limits<double>::quiet_NaN();
    double weightSum = 0;
    bool hasWeights = false;
    int rowStatus = 0;  ///< AttentionResult::rowStatus: 0 normal, 1 no admissible key, 2 padded
};

class MaskMatrix {
public:
    /// Same budget as HeadMatrix: larger patterns are pooled to at most this many cells per side.
    static constexpr int kMaxDisplaySide = 2048;
    static constexpr std::uint8_t kBlank = 0xFF;  ///< reasonAt() of a cell outside the pattern

    /// The pattern of `head`: [rows, cols] = [ceil(n / f), ceil(m / f)] cells with the pool factor
    /// f = ceil(max(n, m) / maxSide). A cell takes the rarest reason among its entries (fewest
    /// entries in this head; ties go to the higher enum value), so a few random or global keys
    /// stay visible inside a wide local band; duplicates of one key are resolved the same way.
    /// Weights: the max over the cell of each key's summed weight; the cell's mean for a head whose
    /// maxima would take minutes (HeadMatrixSource::modeFor: linear and performer past 2^30 weights).
    static MaskMatrix fromResult(const engine::AttentionResult& result, int head, int maxSide = kMaxDisplaySide);
    /// The row panel's data for (head, query) from one row tile; query -1 when out of range.
    /// headCounts: the head's entries per reason (reasonCounts() of its matrix), which rank the
    /// reasons of a key listed for several; null = ranked within the row.
    static MaskRowSummary rowSummary(const engine::AttentionResult& result, int head, std::int64_t query,
                                     const std::array<std::int64_t, engine::kPatternReasonCount>* headCounts = nullptr);

    int rows() const { return m_rows; }
    int cols() const { return m_cols; }
    int poolFactor() const { return m_poolFactor; }
    bool hasWeights() const { return m_hasWeights; }
    float maxWeight() const { return m_maxWeight; }
    std::uint8_t reasonAt(int row, int col) const { return m_reason[index(row, col)]; }
    float weightAt(int row, int col) const { return m_weight[index(row, col)]; }
    /// Entries per reason in this head (duplicates counted), the legend's counts.
    const std::array<std::int64_t, engine::kPatternReasonCount>& reasonCounts() const { return m_counts; }
    /// True when some allowed cell has weight exactly 0 (every key of it, when pooled).
    bool hasExactZeros() const { return m_hasExactZeros; }

private:
    std::size_t index(int row, int col) const { return static_cast<std::size_t>(row) * m_cols + col; }
    /// True when reason a should win a cell over reason b.
    bool rarer(std::uint8_t a, std::uint8_t b) const;
    /// The rarest reason of a set (kBlank for none).
    std::uint8_t rarestOf(engine::ReasonBits bits) const;

    int m_rows = 0;
    int m_cols = 0;
    int m_poolFactor = 1;
    bool m_hasWeights = false;
    bool m_hasExactZeros = false;
    float m_maxWeight = 0.0f;
    std::array<std::int64_t, engine::kPatternReasonCount> m_counts{};
    std::vector<std::uint8_t> m_reason;  // [m_rows, m_cols]; kBlank outside the pattern
    std::vector<float> m_weight;         // [m_rows, m_cols]
};

}  // namespace attnscope::views
