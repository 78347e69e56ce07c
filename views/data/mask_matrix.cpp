#include "views/data/mask_matrix.h"

#include "views/data/head_matrix_source.h"

#include <attnscope/weight_overview.h>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

using engine::AttentionResult;
using engine::PatternReason;

bool MaskMatrix::rarer(std::uint8_t a, std::uint8_t b) const {
    if (b >= engine::kPatternReasonCount) return a < engine::kPatternReasonCount;
    if (a >= engine::kPatternReasonCount) return false;
    return m_counts[a] != m_counts[b] ? m_counts[a] < m_counts[b] : a > b;
}

std::uint8_t MaskMatrix::rarestOf(engine::ReasonBits bits) const {
    std::uint8_t best = kBlank;
    for (int r = 0; r < engine::kPatternReasonCount; ++r)
        if (bits & (1u << r))
            if (rarer(static_cast<std::uint8_t>(r), best)) best = static_cast<std::uint8_t>(r);
    return best;
}

MaskMatrix MaskMatrix::fromResult(const AttentionResult& result, int head, int maxSide) {
    MaskMatrix out;
    const std::int64_t n = std::max<std::int64_t>(result.n, 0);
    const std::int64_t m = std::max<std::int64_t>(result.m, 0);
    maxSide = std::max(maxSide, 1);
    const std::int64_t f = std::max<std::int64_t>(1, (std::max(n, m) + maxSide - 1) / maxSide);
    out.m_poolFactor = static_cast<int>(f);
    out.m_rows = static_cast<int>((n + f - 1) / f);
    out.m_cols = static_cast<int>((m + f - 1) / f);
    out.m_reason.assign(static_cast<std::size_t>(out.m_rows) * out.m_cols, kBlank);
    out.m_weight.assign(out.m_reason.size(), 0.0f);
    if (head < 0 || head >= result.heads || n == 0 || m == 0 || !result.weights) return out;
    engine::WeightOverview overview;
    engine::OverviewRequest request{head, 0, n, 0, m, f};
    // (linear and performer past a billion weights a head: block means, exact by factors)
    const bool means = HeadMatrixSource::modeFor(result, PoolMode::Max) == PoolMode::Mean;
    request.sumsOnly = means;
    engine::buildOverview(*result.weights, request, overview);
    out.m_hasWeights = true;
    for (int r = 0; r < engine::kPatternReasonCount; ++r) out.m_counts[static_cast<std::size_t>(r)] = overview.reasonEntries[static_cast<std::size_t>(r)];
    for (std::size_t c = 0; c < out.m_reason.size(); ++c) {
        if (overview.reasons[c] == 0) continue;
        out.m_reason[c] = out.rarestOf(overview.reasons[c]);
        const int row = static_cast<int>(c / static_cast<std::size_t>(out.m_cols)), col = static_cast<int>(c % static_cast<std::size_t>(out.m_cols));
        out.m_weight[c] = means ? static_cast<float>(overview.sumWeight[c] / static_cast<double>(overview.cellArea(row, col)))
                                : overview.maxWeight[c];
        out.m_maxWeight = std::max(out.m_maxWeight, out.m_weight[c]);
        out.m_hasExactZeros |= !means && overview.maxWeight[c] == 0.0f;  // every allowed key of the cell is 0
    }
    return out;
}

MaskRowSummary MaskMatrix::rowSummary(const AttentionResult& r, int head, std::int64_t query,
                                      const std::array<std::int64_t, engine::kPatternReasonCount>* headCounts) {
    MaskRowSummary s;
    const std::int64_t n = r.n, m = r.m;
    if (head < 0 || head >= r.heads || query < 0 || query >= n || !r.weights) return s;
    s.query = query;
    s.hasWeights = true;
    const engine::WeightTile t = r.weights->tile(head, query, query + 1, 0, m, /*withReasons=*/true);
    // Rank reasons by rarity in the whole head, as the matrix does (or in this row without counts).
    MaskMatrix ranks;
    if (headCounts) {
        ranks.m_counts = *headCounts;
    } else {
        for (std::int64_t j = 0; j < m; ++j)
            for (int b = 0; b < engine::kPatternReasonCount; ++b)
                if (t.reasons[static_cast<std::size_t>(j)] & (1u << b)) ++ranks.m_counts[static_cast<std::size_t>(b)];
    }
    for (std::int64_t j = 0; j < m; ++j) {
        const auto mult = t.multiplicity[static_cast<std::size_t>(j)];
        if (mult == 0) continue;
        s.allowedKeys.push_back(static_cast<int>(j));
        s.reasons.push_back(static_cast<PatternReason>(ranks.rarestOf(t.reasons[static_cast<std::size_t>(j)])));
        s.multiplicity.push_back(mult);
        s.weights.push_back(t.weights[static_cast<std::size_t>(j)]);
        s.entries += mult;
    }
    s.entropy = 0;
    for (float v : s.weights) {
        s.weightSum += v;
        if (v == 0.0f) ++s.exactZeros;
        if (v > 0.0f) s.entropy -= static_cast<double>(v) * std::log(static_cast<double>(v));
    }
    if (r.rowStatus.dtype == engine::DType::U8 && static_cast<std::int64_t>(r.rowStatus.u8.size()) >= r.heads * n)
        s.rowStatus = r.rowStatus.u8[static_cast<std::size_t>(head * n + query)];
    return s;
}

}  // namespace attnscope::views
