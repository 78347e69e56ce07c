#include "views/data/head_matrix.h"

#include <attnscope/weight_overview.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

using engine::AttentionResult;

HeadMatrix HeadMatrix::fromResult(const AttentionResult& result, int head, int maxSide, PoolMode mode,
                                  const std::function<bool(double)>& keepGoing) {
    const std::int64_t n = std::max<std::int64_t>(result.n, 0);
    const std::int64_t m = std::max<std::int64_t>(result.m, 0);
    maxSide = std::max(maxSide, 1);
    const std::int64_t side = std::max(n, m);
    const std::int64_t f = std::max<std::int64_t>(1, (side + maxSide - 1) / maxSide);
    return build(result, head, 0, 0, n, m, f, mode, nullptr, keepGoing);
}

HeadMatrix HeadMatrix::storageFor(std::size_t cells) {
    HeadMatrix out;
    out.m_values.assign(cells, 0.0f);
    out.m_inPattern.assign(cells, 0);
    out.m_values.clear();  // (the capacity stays, its pages touched)
    out.m_inPattern.clear();
    return out;
}

HeadMatrix HeadMatrix::fromRegion(const AttentionResult& result, int head, std::int64_t row0, std::int64_t col0,
                                  std::int64_t rows, std::int64_t cols) {
    return fromRegion(result, head, row0, col0, rows, cols, HeadMatrix());
}

HeadMatrix HeadMatrix::fromRegion(const AttentionResult& result, int head, std::int64_t row0, std::int64_t col0,
                                  std::int64_t rows, std::int64_t cols, HeadMatrix&& spare) {
    const std::int64_t n = std::max<std::int64_t>(result.n, 0);
    const std::int64_t m = std::max<std::int64_t>(result.m, 0);
    row0 = std::clamp<std::int64_t>(row0, 0, n);
    col0 = std::clamp<std::int64_t>(col0, 0, m);
    rows = std::clamp<std::int64_t>(rows, 0, n - row0);
    cols = std::clamp<std::int64_t>(cols, 0, m - col0);
    return build(result, head, row0, col0, rows, cols, 1, PoolMode::Max, &spare);
}

HeadMatrix HeadMatrix::build(const AttentionResult& result, int head, std::int64_t r0, std::int64_t c0,
                             std::int64_t nr, std::int64_t nc, std::int64_t f, PoolMode mode, HeadMatrix* spare,
                             const std::function<bool(double)>& keepGoing) {
    HeadMatrix out;
    if (spare) {
        out.m_values = std::move(spare->m_values);  // assign() below keeps the capacity
        out.m_inPattern = std::move(spare->m_inPattern);
        out.m_inPattern.clear();
    }
    out.m_poolFactor = static_cast<int>(f);
    out.m_poolMode = mode;
    out.m_rowOffset = r0;
    out.m_colOffset = c0;
    out.m_rows = static_cast<int>((nr + f - 1) / f);
    out.m_cols = static_cast<int>((nc + f - 1) / f);
    const auto cells = static_cast<std::size_t>(out.m_rows) * out.m_cols;
    out.m_values.assign(cells, 0.0f);
    const bool headOk = head >= 0 && head < result.heads;
    if (!headOk || !result.weights || nr == 0 || nc == 0) return out;
    out.m_hasWeights = true;
    std::vector<engine::ReasonBits> reasons;
    if (f == 1) {
        // Full resolution: the tile itself (signed weights of approximating variants survive).
        engine::WeightTile t = result.weights->tile(head, r0, r0 + nr, c0, c0 + nc, /*withReasons=*/true);
        out.m_values = std::move(t.weights);
        reasons = std::move(t.reasons);
    } else {
        engine::WeightOverview overview;
        engine::OverviewRequest request{head, r0, r0 + nr, c0, c0 + nc, f};
        request.sumsOnly = mode == PoolMode::Mean;  // (linear, performer: their means by factors)
        if (!engine::buildOverview(*result.weights, request, overview, keepGoing)) {
            out.m_complete = false;
            return out;
        }
        const bool mean = mode == PoolMode::Mean;
        for (int bi = 0; bi < out.m_rows; ++bi)
            for (int bj = 0; bj < out.m_cols; ++bj) {
                const std::size_t c = static_cast<std::size_t>(bi) * out.m_cols + bj;
                out.m_values[c] = mean ? static_cast<float>(overview.sumWeight[c] / static_cast<double>(overview.cellArea(bi, bj)))
                                       : overview.maxWeight[c];
            }
        reasons = std::move(overview.reasons);
    }
    out.markPattern(reasons);
    float lo = std::numeric_limits<float>::infinity(), hi = -lo, pos = lo;
    for (float v : out.m_values) {
        if (!std::isfinite(v)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        if (v > 0.0f) pos = std::min(pos, v);
    }
    out.m_min = std::isfinite(lo) ? lo : 0.0f;
    out.m_max = std::isfinite(hi) ? hi : 0.0f;
    out.m_minPositive = std::isfinite(pos) ? pos : 0.0f;
    return out;
}

void HeadMatrix::markPattern(const std::vector<engine::ReasonBits>& reasons) {
    m_inPattern.assign(m_values.size(), 0);
    for (std::size_t c = 0; c < reasons.size() && c < m_inPattern.size(); ++c) m_inPattern[c] = reasons[c] != 0;
    m_hasMaskedCells = std::find(m_inPattern.begin(), m_inPattern.end(), 0) != m_inPattern.end();
    if (!m_hasMaskedCells) m_inPattern.clear();
}

}  // namespace attnscope::views
