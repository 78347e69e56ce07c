#include "views/data/error_summary.h"

#include <attnscope/result_roles.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Rows per tile: 16 rows of 128k keys are 8 MiB of weights.
constexpr std::int64_t kRowsPerTile = 16;

std::string shapeText(const engine::AttentionResult& r) {
    return std::to_string(r.heads) + " x " + std::to_string(r.n) + " x " + std::to_string(r.m);
}

}  // namespace

void denseWeightRow(const engine::AttentionResult& r, int head, std::int64_t query, std::vector<double>& out) {
    out.assign(static_cast<std::size_t>(std::max<std::int64_t>(r.m, 0)), 0.0);
    if (head < 0 || head >= r.heads || query < 0 || query >= r.n || !r.weights) return;
    const engine::WeightTile t = r.weights->tile(head, query, query + 1, 0, r.m);
    std::copy(t.weights.begin(), t.weights.end(), out.begin());
}

void patternRow(const engine::AttentionResult& r, int head, std::int64_t query, std::vector<std::uint8_t>& out) {
    out.assign(static_cast<std::size_t>(std::max<std::int64_t>(r.m, 0)), 0);
    if (head < 0 || head >= r.heads || query < 0 || query >= r.n || !r.weights) return;
    const engine::WeightTile t = r.weights->tile(head, query, query + 1, 0, r.m, /*withReasons=*/true);
    for (std::size_t j = 0; j < out.size(); ++j) out[j] = t.multiplicity[j] > 0;
}

std::string ErrorSummary::klDescription() const {
    if (!ok) return message;
    const std::int64_t usable = rows - emptyReferenceRows;
    if (klDefinedRows == 0) return "KL undefined (the variant gives 0 where full has mass, in every row)";
    if (klDefinedRows == usable) return "KL over all " + std::to_string(usable) + " rows";
    return "KL over the " + std::to_string(klDefinedRows) + " of " + std::to_string(usable) +
           " rows where it is defined (elsewhere the variant gives 0 where full has mass)";
}

namespace {

// Row r's L1 error, rows [i0, i1) of one head over keys [0, m): the tiles of both results.
void addRowL1(const engine::WeightTile& v, const engine::WeightTile& f, std::int64_t i0, std::int64_t i1, std::int64_t m,
              double* rowL1) {
    for (std::int64_t i = i0; i < i1; ++i) {
        const float* a = v.weights.data() + (i - i0) * m;
        const float* b = f.weights.data() + (i - i0) * m;
        double l1 = 0;
        for (std::int64_t j = 0; j < m; ++j) l1 += std::abs(static_cast<double>(a[j]) - static_cast<double>(b[j]));
        rowL1[i - i0] = l1;
    }
}

}  // namespace

double meanRowL1Error(const engine::AttentionResult& variant, const engine::AttentionResult& exact) {
    if (!engine::comparableShapes(variant, exact) || !variant.weights || !exact.weights || variant.n <= 0) return kNaN;
    const std::int64_t m = engine::tokenKeys(variant);
    double total = 0, rows[kRowsPerTile];
    for (int h = 0; h < variant.heads; ++h)
        for (std::int64_t i0 = 0; i0 < variant.n; i0 += kRowsPerTile) {
            const std::int64_t i1 = std::min(variant.n, i0 + kRowsPerTile);
            addRowL1(variant.weights->tile(h, i0, i1, 0, m), exact.weights->tile(h, i0, i1, 0, m), i0, i1, m, rows);
            for (std::int64_t i = i0; i < i1; ++i) total += rows[i - i0];
        }
    return total / static_cast<double>(variant.heads * variant.n);
}

ErrorSummary summarizeAgainstExact(const engine::AttentionResult& variant, const engine::AttentionResult& exact,
                                   int head) {
    ErrorSummary s;
    s.meanL1 = s.maxL1 = s.meanKl = s.meanKeptMass = kNaN;
    if (!engine::comparableShapes(variant, exact)) {
        s.message = variant.variantId + " has shape " + shapeText(variant) + " but full has " + shapeText(exact) +
                    ": only results on the same Q, K, V can be compared";
        return s;
    }
    if (!variant.weights || !exact.weights) {
        s.message = (exact.weights ? variant.variantId : exact.variantId) + " has no weights: nothing to compare";
        return s;
    }
    if (head < 0 || head >= variant.heads || variant.n <= 0) {
        s.message = "head " + std::to_string(head) + " is not in the result (" + std::to_string(variant.heads) + " heads)";
        return s;
    }
    s.ok = true;
    s.rows = variant.n;
    s.rowL1.assign(static_cast<std::size_t>(s.rows), 0.0);
    s.rowKl.assign(static_cast<std::size_t>(s.rows), kNaN);
    s.rowKeptMass.assign(static_cast<std::size_t>(s.rows), kNaN);
    double l1Total = 0, klTotal = 0, keptTotal = 0;
    s.maxL1 = 0;
    // (over the input's token keys: a relay column of the variant is left out)
    const std::int64_t m = engine::tokenKeys(variant);
    for (std::int64_t i0 = 0; i0 < s.rows; i0 += kRowsPerTile) {
        const std::int64_t i1 = std::min(s.rows, i0 + kRowsPerTile);
        const engine::WeightTile tv = variant.weights->tile(head, i0, i1, 0, m, /*withReasons=*/true);
        const engine::WeightTile tf = exact.weights->tile(head, i0, i1, 0, m);
        double rowsL1[kRowsPerTile];
        addRowL1(tv, tf, i0, i1, m, rowsL1);
        for (std::int64_t i = i0; i < i1; ++i) {
            const float* v = tv.weights.data() + (i - i0) * m;
            const float* f = tf.weights.data() + (i - i0) * m;
            const std::uint8_t* allowed = tv.multiplicity.data() + (i - i0) * m;
            const double l1 = rowsL1[i - i0];
            double kl = 0, fullMass = 0, kept = 0;
            bool klDefined = true;
            for (std::int64_t j = 0; j < m; ++j) {
                const double vj = v[j], fj = f[j];
                fullMass += fj;
                if (allowed[j]) kept += fj;
                if (fj > 0) {
                    if (vj > 0)
                        kl += fj * std::log(fj / vj);
                    else
                        klDefined = false;
                }
            }
            const auto row = static_cast<std::size_t>(i);
            s.rowL1[row] = l1;
            l1Total += l1;
            if (l1 > s.maxL1 || s.maxL1Row < 0) {
                s.maxL1 = l1;
                s.maxL1Row = i;
            }
            if (fullMass <= 0) {
                ++s.emptyReferenceRows;
                continue;
            }
            // The share of full's mass, so rows whose float32 sum is 0.9999999 still give exactly 1
            // when every key is allowed.
            s.rowKeptMass[row] = kept / fullMass;
            keptTotal += s.rowKeptMass[row];
            if (klDefined) {
                s.rowKl[row] = kl;
                klTotal += kl;
                ++s.klDefinedRows;
            }
        }
    }
    s.meanL1 = l1Total / static_cast<double>(s.rows);
    const std::int64_t usable = s.rows - s.emptyReferenceRows;
    s.meanKeptMass = usable > 0 ? keptTotal / static_cast<double>(usable) : kNaN;
    s.meanKl = s.klDefinedRows > 0 ? klTotal / static_cast<double>(s.klDefinedRows) : kNaN;
    return s;
}

}  // namespace attnscope::views
