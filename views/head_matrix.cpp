#include "views/head_matrix.h"

#include <algorithm>
#include <limits>

namespace attnscope::views {

using engine::AttentionResult;
using engine::WeightsLayout;

HeadMatrix HeadMatrix::fromResult(const AttentionResult& result, int head, int maxSide) {
    HeadMatrix out;
    const std::int64_t n = std::max<std::int64_t>(result.n, 0);
    const std::int64_t m = std::max<std::int64_t>(result.m, 0);
    maxSide = std::max(maxSide, 1);
    const std::int64_t side = std::max(n, m);
    const std::int64_t f = std::max<std::int64_t>(1, (side + maxSide - 1) / maxSide);
    out.m_poolFactor = static_cast<int>(f);
    out.m_rows = static_cast<int>((n + f - 1) / f);
    out.m_cols = static_cast<int>((m + f - 1) / f);
    out.m_values.assign(static_cast<std::size_t>(out.m_rows) * out.m_cols, 0.0f);

    const bool headOk = head >= 0 && head < result.heads;
    const float* w = result.weights.data();
    if (!headOk || !w || n == 0 || m == 0) return out;

    // Signed weights (approximating variants) must survive unpooled, so f == 1 assigns.
    auto pool = [&](std::int64_t i, std::int64_t j, float v) {
        float& cell = out.m_values[static_cast<std::size_t>((i / f) * out.m_cols + j / f)];
        cell = f == 1 ? v : std::max(cell, v);
    };

    if (result.weightsLayout == WeightsLayout::Dense) {
        if (result.weights.numel() < result.heads * n * m) return out;
        out.m_hasWeights = true;
        const float* base = w + static_cast<std::size_t>(head) * n * m;
        if (f > 1) std::fill(out.m_values.begin(), out.m_values.end(), -std::numeric_limits<float>::infinity());
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < m; ++j) pool(i, j, base[i * m + j]);
    } else if (result.weightsLayout == WeightsLayout::AlignedWithPattern && !result.pattern.implicitDense) {
        const auto& p = result.pattern;
        const std::int64_t rowBase = p.perHead ? static_cast<std::int64_t>(head) * n : 0;
        const std::int64_t valueBase = p.perHead ? 0 : static_cast<std::int64_t>(head) * p.nnz();
        if (static_cast<std::int64_t>(p.rowPtr.size()) < rowBase + n + 1) return out;
        out.m_hasWeights = true;
        // Sum duplicates of a row exactly before pooling, touching only the listed keys.
        std::vector<float> row(static_cast<std::size_t>(m), 0.0f);
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t b = p.rowPtr[rowBase + i], e = p.rowPtr[rowBase + i + 1];
            for (std::int64_t k = b; k < e; ++k) {
                const std::int32_t j = p.colIdx[k];
                if (j >= 0 && j < m) row[j] += w[valueBase + k];
            }
            for (std::int64_t k = b; k < e; ++k) {
                const std::int32_t j = p.colIdx[k];
                if (j < 0 || j >= m || row[j] == 0.0f) continue;
                pool(i, j, row[j]);
                row[j] = 0.0f;
            }
        }
    }
    out.markPattern(result.pattern, head, n, m);
    out.m_max = out.m_values.empty() ? 0.0f : *std::max_element(out.m_values.begin(), out.m_values.end());
    return out;
}

void HeadMatrix::markPattern(const engine::SparsePattern& p, int head, std::int64_t n, std::int64_t m) {
    const std::int64_t f = m_poolFactor;
    // One pass over the listed entries: per-cell SparsePattern::allows() would search each row.
    if (p.implicitDense) {
        if (!p.causal) return;
        m_inPattern.assign(m_values.size(), 0);
        for (int bi = 0; bi < m_rows; ++bi) {
            const std::int64_t lastQuery = std::min<std::int64_t>(n - 1, (bi + 1) * f - 1);
            for (int bj = 0; bj < m_cols; ++bj)
                m_inPattern[static_cast<std::size_t>(bi) * m_cols + bj] = bj * f <= lastQuery;
        }
    } else {
        const std::int64_t rowBase = p.perHead ? static_cast<std::int64_t>(head) * n : 0;
        if (p.rows != n || static_cast<std::int64_t>(p.rowPtr.size()) < rowBase + n + 1) return;  // no usable pattern
        m_inPattern.assign(m_values.size(), 0);
        for (std::int64_t i = 0; i < n; ++i) {
            for (std::int64_t k = p.rowPtr[rowBase + i]; k < p.rowPtr[rowBase + i + 1]; ++k) {
                const std::int32_t j = p.colIdx[static_cast<std::size_t>(k)];
                if (j >= 0 && j < m) m_inPattern[static_cast<std::size_t>((i / f) * m_cols + j / f)] = 1;
            }
        }
    }
    m_hasMaskedCells = std::find(m_inPattern.begin(), m_inPattern.end(), 0) != m_inPattern.end();
    if (!m_hasMaskedCells) m_inPattern.clear();
}

}  // namespace attnscope::views
