#pragma once
// One head's weights pooled onto a grid, for overviews of long inputs (heatmap, heads grid, mask
// view, thumbnails): built from the result's tiles (rows that allow nearly every key) or row
// visits (sparse rows), so its cost is that of the weights it covers, never of n x m cells that
// nothing attends. Plain C++; the views run it on their background thread, cancellable.

#include <attnscope/attention_weights.h>
#include <attnscope/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace attnscope::engine {

/// Queries [r0, r1) x keys [c0, c1) of one head in cells of factor x factor (edge cells smaller).
struct OverviewRequest {
    int head = 0;
    std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    std::int64_t factor = 1;
    /// Only the cells' sums (and reasons) are wanted. Where the weights pool their sums by factors
    /// (poolsSumsByFactors) the overview then costs its cells and rows, not every weight, and its
    /// maxWeight and minWeight are NaN (not computed); elsewhere it is built whole.
    bool sumsOnly = false;
};

struct WeightOverview {
    OverviewRequest region;
    int rows = 0, cols = 0;  ///< ceil((r1 - r0) / factor), ceil((c1 - c0) / factor)
    /// [rows, cols] the largest and smallest weight and the sum over each cell's keys, a key
    /// outside the pattern counting as 0 (so a sparse cell's max is never below 0).
    std::vector<float> maxWeight, minWeight;
    std::vector<double> sumWeight;
    std::vector<ReasonBits> reasons;       ///< [rows, cols] the reasons of the cell's allowed keys (OR)
    std::vector<std::uint8_t> exactZero;   ///< [rows, cols] 1 when an allowed key has weight exactly 0
    /// Entries per reason over the region (a key listed c times counts c).
    std::array<std::int64_t, kPatternReasonCount> reasonEntries{};

    std::size_t cell(std::int64_t query, std::int64_t key) const {
        return static_cast<std::size_t>(((query - region.r0) / region.factor) * cols + (key - region.c0) / region.factor);
    }
    /// Keys x queries of cell (row, col), for means.
    std::int64_t cellArea(int row, int col) const;
};

/// True when `weights` pools its cells' sums without visiting each weight (linear and performer:
/// a cell's sum is (Σ_i φ(q_i)/den_i)·(Σ_j φ(k_j))); see OverviewRequest::sumsOnly.
bool poolsSumsByFactors(const AttentionWeights& weights);

/// True when the head's overview is pooled group by group from its pattern's plan (the pattern
/// variants but Star): a block of rows scored against a run of keys at once, each weight
/// exp(s/√d − row_max) / row_sum from the kept statistics, which equal each row's own to float
/// rounding (the kernel's float sum: a weight within a few parts per million of the one tiles and
/// row visits give, which renormalise each row in float64).
bool poolsByGroups(const AttentionWeights& weights, int head);

/// Fills `out` for `request` (clamped to the result). keepGoing(fraction done) is polled between
/// blocks of rows; when it returns false the overview stops and the function returns false.
/// Throws std::out_of_range for a head outside the result.
bool buildOverview(const AttentionWeights& weights, const OverviewRequest& request, WeightOverview& out,
                   const std::function<bool(double)>& keepGoing = {});

}  // namespace attnscope::engine
