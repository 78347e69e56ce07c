#pragma once
// How far a variant's attention weights are from exact softmax (`full`) on the same Q, K, V, for
// one head: per-row L1 distance, KL(full ‖ variant) where it is defined, and the share of full's
// softmax mass that the variant's pattern keeps. Plain C++ on the engine's plain result types (no
// Qt, no torch), so the compare view, exports and tests share one definition.

#include <attnscope/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::views {

struct ErrorSummary {
    /// False when the two results cannot be compared; `message` then says why (shapes differ,
    /// no weights kept, head out of range) and every number below is empty or NaN.
    bool ok = false;
    std::string message;

    std::int64_t rows = 0;  ///< queries n of the head
    /// Σ_j |variant_ij − full_ij| for each query row i, in [0, 2] for rows that sum to 1.
    std::vector<double> rowL1;
    double meanL1 = 0;
    double maxL1 = 0;
    std::int64_t maxL1Row = -1;

    /// KL(full ‖ variant) = Σ_j full_ij · ln(full_ij / variant_ij), averaged over the rows where it
    /// is defined: a row is undefined when the variant gives weight <= 0 to a key where full has
    /// mass (outside a sparse pattern, an exact zero of top-k or entmax, or a negative implied
    /// weight). NaN when no row is defined.
    double meanKl = 0;
    std::int64_t klDefinedRows = 0;  ///< rows that entered meanKl
    std::vector<double> rowKl;       ///< per row; NaN where undefined

    /// Σ_{j in the variant's pattern} full_ij per row (each allowed key once), averaged over the
    /// rows where full has mass: 1 when the pattern allows every key full attends.
    double meanKeptMass = 0;
    std::vector<double> rowKeptMass;
    /// Rows left out of KL and kept mass because full's row is empty (all zero: no admissible key
    /// or a padded query).
    std::int64_t emptyReferenceRows = 0;

    /// "KL undefined (the variant gives 0 where full has mass)", "KL over 3 of 5 rows", ...
    std::string klDescription() const;
};

/// Compares `variant` with the exact reference `exact` for `head`. Both must have the same
/// heads, n and m; otherwise the summary is not ok and says why. Reads both through tiles of a
/// few rows: O(n · m) time, O(m) memory.
ErrorSummary summarizeAgainstExact(const engine::AttentionResult& variant, const engine::AttentionResult& exact,
                                   int head);

/// The mean over every head and query of the row L1 error Σ_j |variant − exact| over the input's
/// token keys (the one definition: the summary's meanL1 is this for one head, the Diagnostics
/// tab's error curve this over all). NaN when the shapes differ or either has no weights.
double meanRowL1Error(const engine::AttentionResult& variant, const engine::AttentionResult& exact);

/// The dense weights of one (head, query) row into `out` (resized to m): keys listed twice count
/// twice, keys outside the pattern are 0, as AttentionResult::weightAt (one row tile).
void denseWeightRow(const engine::AttentionResult& result, int head, std::int64_t query, std::vector<double>& out);

/// Marks in `out` (resized to m, 0/1) the keys the pattern of `result` allows for (head, query).
void patternRow(const engine::AttentionResult& result, int head, std::int64_t query, std::vector<std::uint8_t>& out);

}  // namespace attnscope::views
