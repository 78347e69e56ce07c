#include "views/error_summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool hasUsableWeights(const engine::AttentionResult& r) {
    if (r.weightsLayout == engine::WeightsLayout::None || r.weights.empty()) return false;
    // Aligned weights need a listed pattern to be aligned with.
    return !(r.weightsLayout == engine::WeightsLayout::AlignedWithPattern && r.pattern.implicitDense);
}

std::string shapeText(const engine::AttentionResult& r) {
    return std::to_string(r.heads) + " x " + std::to_string(r.n) + " x " + std::to_string(r.m);
}

}  // namespace

void denseWeightRow(const engine::AttentionResult& r, int head, std::int64_t query, std::vector<double>& out) {
    out.assign(static_cast<std::size_t>(std::max<std::int64_t>(r.m, 0)), 0.0);
    if (head < 0 || head >= r.heads || query < 0 || query >= r.n || !hasUsableWeights(r)) return;
    if (r.weightsLayout == engine::WeightsLayout::Dense) {
        const float* row = r.weights.data() + (static_cast<std::size_t>(head) * r.n + query) * r.m;
        for (std::int64_t j = 0; j < r.m; ++j) out[static_cast<std::size_t>(j)] = row[j];
        return;
    }
    const engine::SparsePattern& p = r.pattern;
    const std::int64_t row = (p.perHead ? head * r.n : 0) + query;
    const std::int64_t base = p.perHead ? 0 : head * p.nnz();
    for (std::int64_t e = p.rowPtr[static_cast<std::size_t>(row)]; e < p.rowPtr[static_cast<std::size_t>(row) + 1]; ++e)
        out[static_cast<std::size_t>(p.colIdx[static_cast<std::size_t>(e)])] += r.weights[static_cast<std::size_t>(base + e)];
}

void patternRow(const engine::AttentionResult& r, int head, std::int64_t query, std::vector<std::uint8_t>& out) {
    const engine::SparsePattern& p = r.pattern;
    // No listed pattern: every key is allowed (as HeadMatrix and the compare view assume).
    if (p.rows != r.n || (!p.implicitDense && p.rowPtr.empty())) {
        out.assign(static_cast<std::size_t>(std::max<std::int64_t>(r.m, 0)), 1);
        return;
    }
    out.assign(static_cast<std::size_t>(std::max<std::int64_t>(r.m, 0)), 0);
    if (p.implicitDense) {
        const std::int64_t last = p.causal ? std::min(query, r.m - 1) : r.m - 1;
        for (std::int64_t j = 0; j <= last; ++j) out[static_cast<std::size_t>(j)] = 1;
        return;
    }
    const std::int64_t row = (p.perHead ? head * r.n : 0) + query;
    for (std::int64_t e = p.rowPtr[static_cast<std::size_t>(row)]; e < p.rowPtr[static_cast<std::size_t>(row) + 1]; ++e)
        out[static_cast<std::size_t>(p.colIdx[static_cast<std::size_t>(e)])] = 1;
}

std::string ErrorSummary::klDescription() const {
    if (!ok) return message;
    const std::int64_t usable = rows - emptyReferenceRows;
    if (klDefinedRows == 0) return "KL undefined (the variant gives 0 where full has mass, in every row)";
    if (klDefinedRows == usable) return "KL over all " + std::to_string(usable) + " rows";
    return "KL over the " + std::to_string(klDefinedRows) + " of " + std::to_string(usable) +
           " rows where it is defined (elsewhere the variant gives 0 where full has mass)";
}

ErrorSummary summarizeAgainstExact(const engine::AttentionResult& variant, const engine::AttentionResult& exact,
                                   int head) {
    ErrorSummary s;
    s.meanL1 = s.maxL1 = s.meanKl = s.meanKeptMass = kNaN;
    if (variant.heads != exact.heads || variant.n != exact.n || variant.m != exact.m) {
        s.message = variant.variantId + " has shape " + shapeText(variant) + " but full has " + shapeText(exact) +
                    ": only results on the same Q, K, V can be compared";
        return s;
    }
    if (!hasUsableWeights(variant) || !hasUsableWeights(exact)) {
        s.message = (hasUsableWeights(exact) ? variant.variantId : exact.variantId) +
                    " kept no weights (n above the dense limit?): nothing to compare";
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
    std::vector<double> v, f;
    std::vector<std::uint8_t> allowed;
    double l1Total = 0, klTotal = 0, keptTotal = 0;
    s.maxL1 = 0;
    for (std::int64_t i = 0; i < s.rows; ++i) {
        denseWeightRow(variant, head, i, v);
        denseWeightRow(exact, head, i, f);
        patternRow(variant, head, i, allowed);
        double l1 = 0, kl = 0, fullMass = 0, kept = 0;
        bool klDefined = true;
        for (std::size_t j = 0; j < f.size(); ++j) {
            l1 += std::abs(v[j] - f[j]);
            fullMass += f[j];
            if (allowed[j]) kept += f[j];
            if (f[j] > 0) {
                if (v[j] > 0)
                    kl += f[j] * std::log(f[j] / v[j]);
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
    s.meanL1 = l1Total / static_cast<double>(s.rows);
    const std::int64_t usable = s.rows - s.emptyReferenceRows;
    s.meanKeptMass = usable > 0 ? keptTotal / static_cast<double>(usable) : kNaN;
    s.meanKl = s.klDefinedRows > 0 ? klTotal / static_cast<double>(s.klDefinedRows) : kNaN;
    return s;
}

}  // namespace attnscope::views
