#include "views/mask_matrix.h"

#include <algorithm>
#include <cmath>

namespace attnscope::views {

using engine::AttentionResult;
using engine::PatternReason;
using engine::WeightsLayout;

namespace {

// Where the weights of (head, query) live: dense rows, or values aligned with the CSR entries.
struct WeightSource {
    const float* dense = nullptr;    // row-major [n, m] of the head
    const float* aligned = nullptr;  // indexed by CSR entry

    bool any() const { return dense || aligned; }
};

WeightSource weightSource(const AttentionResult& r, int head) {
    WeightSource s;
    const float* w = r.weights.data();
    if (!w || head < 0 || head >= r.heads) return s;
    if (r.weightsLayout == WeightsLayout::Dense && r.weights.numel() >= r.heads * r.n * r.m) {
        s.dense = w + static_cast<std::size_t>(head) * r.n * r.m;
    } else if (r.weightsLayout == WeightsLayout::AlignedWithPattern && !r.pattern.implicitDense) {
        const std::int64_t nnz = r.pattern.nnz();
        if (r.pattern.perHead && r.weights.numel() >= nnz) s.aligned = w;
        if (!r.pattern.perHead && r.weights.numel() >= r.heads * nnz) s.aligned = w + static_cast<std::size_t>(head) * nnz;
    }
    return s;
}

// First CSR row of `head`, or -1 when the pattern does not cover it.
std::int64_t rowBase(const engine::SparsePattern& p, int head, std::int64_t n) {
    if (p.implicitDense || p.rows != n) return -1;
    const std::int64_t base = p.perHead ? static_cast<std::int64_t>(head) * n : 0;
    if (static_cast<std::int64_t>(p.rowPtr.size()) < base + n + 1) return -1;
    if (p.rowPtr[base + n] > p.nnz() || static_cast<std::int64_t>(p.reason.size()) < p.nnz()) return -1;
    return base;
}

std::uint8_t implicitReason(const engine::SparsePattern& p) {
    return static_cast<std::uint8_t>(p.causal ? PatternReason::Causal : PatternReason::Dense);
}

}  // namespace

bool MaskMatrix::rarer(std::uint8_t a, std::uint8_t b) const {
    if (b >= engine::kPatternReasonCount) return a < engine::kPatternReasonCount;
    if (a >= engine::kPatternReasonCount) return false;
    return m_counts[a] != m_counts[b] ? m_counts[a] < m_counts[b] : a > b;
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
    if (head < 0 || head >= result.heads || n == 0 || m == 0) return out;
    if (result.pattern.implicitDense)
        out.fillImplicit(result, head, n, m);
    else
        out.fillListed(result, head, n, m);
    for (std::size_t c = 0; c < out.m_reason.size(); ++c) {
        if (out.m_reason[c] == kBlank) continue;
        out.m_maxWeight = std::max(out.m_maxWeight, out.m_weight[c]);
        out.m_hasExactZeros |= out.m_hasWeights && out.m_weight[c] == 0.0f;
    }
    return out;
}

void MaskMatrix::fillImplicit(const AttentionResult& r, int head, std::int64_t n, std::int64_t m) {
    const auto& p = r.pattern;
    const std::uint8_t reason = implicitReason(p);
    const std::int64_t f = m_poolFactor;
    std::int64_t count = 0;
    for (std::int64_t i = 0; i < n; ++i) count += p.causal ? std::min(i + 1, m) : m;
    m_counts[reason] = count;
    for (int bi = 0; bi < m_rows; ++bi) {
        const std::int64_t lastQuery = std::min<std::int64_t>(n - 1, (bi + 1) * f - 1);
        for (int bj = 0; bj < m_cols; ++bj)
            if (!p.causal || bj * f <= lastQuery) m_reason[index(bi, bj)] = reason;
    }
    const WeightSource w = weightSource(r, head);
    if (!w.dense) return;
    m_hasWeights = true;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t end = p.causal ? std::min(i + 1, m) : m;
        float* row = m_weight.data() + static_cast<std::size_t>(i / f) * m_cols;
        for (std::int64_t j = 0; j < end; ++j) row[j / f] = std::max(row[j / f], w.dense[i * m + j]);
    }
}

void MaskMatrix::fillListed(const AttentionResult& r, int head, std::int64_t n, std::int64_t m) {
    const auto& p = r.pattern;
    const std::int64_t base = rowBase(p, head, n);
    if (base < 0) return;
    for (std::int64_t e = p.rowPtr[base]; e < p.rowPtr[base + n]; ++e)
        if (p.reason[e] < engine::kPatternReasonCount) ++m_counts[p.reason[e]];
    const WeightSource w = weightSource(r, head);
    m_hasWeights = w.any();
    const std::int64_t f = m_poolFactor;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t end = p.rowPtr[base + i + 1];
        // Column indices are sorted within a row, so the duplicates of a key are adjacent.
        for (std::int64_t e = p.rowPtr[base + i]; e < end;) {
            const std::int32_t j = p.colIdx[e];
            std::uint8_t best = p.reason[e];
            float sum = w.aligned ? w.aligned[e] : 0.0f;
            std::int64_t next = e + 1;
            for (; next < end && p.colIdx[next] == j; ++next) {
                if (rarer(p.reason[next], best)) best = p.reason[next];
                if (w.aligned) sum += w.aligned[next];
            }
            e = next;
            if (j < 0 || j >= m) continue;
            const std::size_t cell = index(static_cast<int>(i / f), static_cast<int>(j / f));
            if (rarer(best, m_reason[cell])) m_reason[cell] = best;
            const float weight = w.dense ? w.dense[i * m + j] : sum;
            m_weight[cell] = std::max(m_weight[cell], weight);
        }
    }
}

MaskRowSummary MaskMatrix::rowSummary(const AttentionResult& r, int head, std::int64_t query) {
    MaskRowSummary s;
    const std::int64_t n = r.n, m = r.m;
    if (head < 0 || head >= r.heads || query < 0 || query >= n) return s;
    s.query = query;
    const WeightSource w = weightSource(r, head);
    s.hasWeights = w.any();
    const auto& p = r.pattern;
    if (p.implicitDense) {
        const std::int64_t end = p.causal ? std::min(query + 1, m) : m;
        const auto reason = static_cast<PatternReason>(implicitReason(p));
        for (std::int64_t j = 0; j < end; ++j) {
            s.allowedKeys.push_back(static_cast<int>(j));
            s.reasons.push_back(reason);
            s.multiplicity.push_back(1);
            if (w.dense) s.weights.push_back(w.dense[query * m + j]);
        }
        s.entries = end;
    } else {
        const std::int64_t base = rowBase(p, head, n);
        if (base >= 0) {
            // Rank reasons by rarity in the whole head, as the matrix does.
            MaskMatrix ranks;
            for (std::int64_t e = p.rowPtr[base]; e < p.rowPtr[base + n]; ++e)
                if (p.reason[e] < engine::kPatternReasonCount) ++ranks.m_counts[p.reason[e]];
            const std::int64_t end = p.rowPtr[base + query + 1];
            for (std::int64_t e = p.rowPtr[base + query]; e < end; ++e) {
                const std::int32_t j = p.colIdx[e];
                if (j < 0 || j >= m) continue;
                ++s.entries;
                if (!s.allowedKeys.empty() && s.allowedKeys.back() == j) {
                    ++s.multiplicity.back();
                    if (ranks.rarer(p.reason[e], static_cast<std::uint8_t>(s.reasons.back())))
                        s.reasons.back() = static_cast<PatternReason>(p.reason[e]);
                    if (w.aligned) s.weights.back() += w.aligned[e];
                    continue;
                }
                s.allowedKeys.push_back(j);
                s.reasons.push_back(static_cast<PatternReason>(p.reason[e]));
                s.multiplicity.push_back(1);
                if (w.aligned) s.weights.push_back(w.aligned[e]);
                if (w.dense) s.weights.push_back(w.dense[query * m + j]);
            }
        }
    }
    if (s.hasWeights) {
        s.entropy = 0;
        for (float v : s.weights) {
            s.weightSum += v;
            if (v == 0.0f) ++s.exactZeros;
            if (v > 0.0f) s.entropy -= static_cast<double>(v) * std::log(static_cast<double>(v));
        }
    }
    if (r.rowStatus.dtype == engine::DType::U8 && static_cast<std::int64_t>(r.rowStatus.u8.size()) >= r.heads * n)
        s.rowStatus = r.rowStatus.u8[static_cast<std::size_t>(head * n + query)];
    return s;
}

}  // namespace attnscope::views
