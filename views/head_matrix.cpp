#include "views/head_matrix.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

using engine::AttentionResult;
using engine::WeightsLayout;

HeadMatrix HeadMatrix::fromResult(const AttentionResult& result, int head, int maxSide, PoolMode mode) {
    const std::int64_t n = std::max<std::int64_t>(result.n, 0);
    const std::int64_t m = std::max<std::int64_t>(result.m, 0);
    maxSide = std::max(maxSide, 1);
    const std::int64_t side = std::max(n, m);
    const std::int64_t f = std::max<std::int64_t>(1, (side + maxSide - 1) / maxSide);
    return build(result, head, 0, 0, n, m, f, mode);
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
                             std::int64_t nr, std::int64_t nc, std::int64_t f, PoolMode mode, HeadMatrix* spare) {
    HeadMatrix out;
    if (spare) {
        out.m_values = std::move(spare->m_values);  // assign() below keeps the capacity
        out.m_inPattern = std::move(spare->m_inPattern);
        out.m_inPattern.clear();
    }
    const std::int64_t n = std::max<std::int64_t>(result.n, 0);
    const std::int64_t m = std::max<std::int64_t>(result.m, 0);
    out.m_poolFactor = static_cast<int>(f);
    out.m_poolMode = mode;
    out.m_rowOffset = r0;
    out.m_colOffset = c0;
    out.m_rows = static_cast<int>((nr + f - 1) / f);
    out.m_cols = static_cast<int>((nc + f - 1) / f);
    const bool headOk = head >= 0 && head < result.heads;
    const float* w = result.weights.data();
    // A full-resolution copy of dense weights writes every cell: recycled storage needs no zeros.
    const bool copiesAll = f == 1 && headOk && w && result.weightsLayout == WeightsLayout::Dense &&
                           result.weights.numel() >= result.heads * n * m;
    const auto cells = static_cast<std::size_t>(out.m_rows) * out.m_cols;
    if (copiesAll) {
        out.m_values.resize(cells);
    } else {
        out.m_values.assign(cells, 0.0f);
    }
    if (!headOk || !w || nr == 0 || nc == 0) return out;

    const bool mean = f > 1 && mode == PoolMode::Mean;
    // Signed weights (approximating variants) must survive unpooled, so f == 1 assigns; max
    // pooling of dense blocks starts from -inf, sparse blocks from the 0 of unlisted keys.
    if (result.weightsLayout == WeightsLayout::Dense) {
        if (result.weights.numel() < result.heads * n * m) return out;
        out.m_hasWeights = true;
        const float* base = w + static_cast<std::size_t>(head) * n * m;
        if (f > 1 && !mean) std::fill(out.m_values.begin(), out.m_values.end(), -std::numeric_limits<float>::infinity());
        for (std::int64_t i = 0; i < nr; ++i) {
            float* outRow = out.m_values.data() + static_cast<std::size_t>(i / f) * out.m_cols;
            const float* in = base + (r0 + i) * m + c0;
            if (f == 1) {
                std::copy(in, in + nc, outRow);
                continue;
            }
            for (int bj = 0; bj < out.m_cols; ++bj) {
                const std::int64_t j0 = bj * f, j1 = std::min(j0 + f, nc);
                float acc = outRow[bj];
                if (mean) {
                    for (std::int64_t j = j0; j < j1; ++j) acc += in[j];
                } else {
                    for (std::int64_t j = j0; j < j1; ++j) acc = std::max(acc, in[j]);
                }
                outRow[bj] = acc;
            }
        }
    } else if (result.weightsLayout == WeightsLayout::AlignedWithPattern && !result.pattern.implicitDense) {
        const auto& p = result.pattern;
        const std::int64_t rowBase = p.perHead ? static_cast<std::int64_t>(head) * n : 0;
        const std::int64_t valueBase = p.perHead ? 0 : static_cast<std::int64_t>(head) * p.nnz();
        if (static_cast<std::int64_t>(p.rowPtr.size()) < rowBase + n + 1) return out;
        out.m_hasWeights = true;
        // Sum duplicates of a row exactly before pooling, touching only the listed keys.
        std::vector<float> row(static_cast<std::size_t>(m), 0.0f);
        for (std::int64_t i = r0; i < r0 + nr; ++i) {
            const std::int64_t b = p.rowPtr[rowBase + i], e = p.rowPtr[rowBase + i + 1];
            for (std::int64_t k = b; k < e; ++k) {
                const std::int32_t j = p.colIdx[k];
                if (j >= c0 && j < c0 + nc) row[j] += w[valueBase + k];
            }
            float* outRow = out.m_values.data() + static_cast<std::size_t>((i - r0) / f) * out.m_cols;
            for (std::int64_t k = b; k < e; ++k) {
                const std::int32_t j = p.colIdx[k];
                if (j < c0 || j >= c0 + nc || row[j] == 0.0f) continue;
                float& cell = outRow[(j - c0) / f];
                cell = f == 1 ? row[j] : mean ? cell + row[j] : std::max(cell, row[j]);
                row[j] = 0.0f;
            }
        }
    }
    if (mean) {
        for (int bi = 0; bi < out.m_rows; ++bi) {
            const std::int64_t h = std::min<std::int64_t>(f, nr - bi * f);
            for (int bj = 0; bj < out.m_cols; ++bj) {
                const std::int64_t wdt = std::min<std::int64_t>(f, nc - bj * f);
                out.m_values[static_cast<std::size_t>(bi) * out.m_cols + bj] /= static_cast<float>(h * wdt);
            }
        }
    }
    out.markPattern(result.pattern, head, n, m, nr, nc);
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

void HeadMatrix::markPattern(const engine::SparsePattern& p, int head, std::int64_t n, std::int64_t m, std::int64_t nr,
                             std::int64_t nc) {
    const std::int64_t f = m_poolFactor, r0 = m_rowOffset, c0 = m_colOffset;
    // One pass over the listed entries: per-cell SparsePattern::allows() would search each row.
    if (p.implicitDense) {
        if (!p.causal) return;
        m_inPattern.assign(m_values.size(), 0);
        for (int bi = 0; bi < m_rows; ++bi) {
            const std::int64_t lastQuery = r0 + std::min<std::int64_t>(nr - 1, (bi + 1) * f - 1);
            for (int bj = 0; bj < m_cols; ++bj)
                m_inPattern[static_cast<std::size_t>(bi) * m_cols + bj] = c0 + bj * f <= lastQuery;
        }
    } else {
        const std::int64_t rowBase = p.perHead ? static_cast<std::int64_t>(head) * n : 0;
        if (p.rows != n || static_cast<std::int64_t>(p.rowPtr.size()) < rowBase + n + 1) return;  // no usable pattern
        m_inPattern.assign(m_values.size(), 0);
        for (std::int64_t i = r0; i < r0 + nr; ++i) {
            for (std::int64_t k = p.rowPtr[rowBase + i]; k < p.rowPtr[rowBase + i + 1]; ++k) {
                const std::int32_t j = p.colIdx[static_cast<std::size_t>(k)];
                if (j >= c0 && j < c0 + nc && j < m)
                    m_inPattern[static_cast<std::size_t>(((i - r0) / f) * m_cols + (j - c0) / f)] = 1;
            }
        }
    }
    m_hasMaskedCells = std::find(m_inPattern.begin(), m_inPattern.end(), 0) != m_inPattern.end();
    if (!m_hasMaskedCells) m_inPattern.clear();
}

}  // namespace attnscope::views
