#include "attention/weights/softmax_row_weights.h"

#include "base/kernels/blas_gemm.h"
#include "base/kernels/softmax_kernel.h"

#include <attnscope/types.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::engine {

void scoreTile(const float* q, const float* k, std::int64_t d, std::int64_t r0, std::int64_t r1, std::int64_t c0,
               std::int64_t c1, float* out) {
    gemmRowMajor(true, r1 - r0, c1 - c0, d, q + r0 * d, d, k + c0 * d, d, out, c1 - c0);
}

SoftmaxRowWeights::SoftmaxRowWeights(SharedFloats q, SharedFloats k, SoftmaxScoreRule rule, std::vector<std::uint8_t> keyPadding,
                                     std::vector<std::uint8_t> queryPadding, ReasonBits reason)
    : DenseRowWeights(q.shape[0], q.shape[1], k.shape[1]), m_q(std::move(q)), m_k(std::move(k)), m_rule(std::move(rule)),
      m_keyPadding(std::move(keyPadding)), m_queryPadding(std::move(queryPadding)), m_reason(reason) {
    m_d = m_q.shape[2];
    m_rule.n = queries();
    m_rule.m = keys();
}

std::int64_t SoftmaxRowWeights::entries(int) const {
    const std::int64_t n = queries(), m = keys();
    if (!m_rule.causal && m_rule.window <= 0) return n * m;
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < n; ++i) total += std::max<std::int64_t>(m_rule.end(i) - m_rule.begin(i), 0);
    return total;
}

namespace {

// Σ values in double over eight running sums (one chain of dependent adds cost 4 cycles a key).
double sumInDouble(const float* values, std::int64_t count) {
    double part[8] = {};
    std::int64_t t = 0;
    for (; t + 8 <= count; t += 8)
        for (int lane = 0; lane < 8; ++lane) part[lane] += values[t + lane];
    for (; t < count; ++t) part[t % 8] += values[t];
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

}  // namespace

void SoftmaxRowWeights::rowExponentials(int head, const float* s, std::int64_t begin, std::int64_t end, float* e,
                                        float& shift, double& sum) const {
    const std::int64_t count = std::max<std::int64_t>(end - begin, 0);
    const bool anyPadding = !m_keyPadding.empty();
    const auto padded = [&](std::int64_t j) { return anyPadding && m_keyPadding[static_cast<std::size_t>(j)]; };
    if (!anyPadding) {
        shift = maxValue(s, count);
    } else {
        shift = -std::numeric_limits<float>::infinity();
        for (std::int64_t j = begin; j < end; ++j)
            if (!padded(j)) shift = std::max(shift, s[j - begin]);
    }
    sum = 0;
    if (!std::isfinite(shift)) return;
    // With a sink the row is shifted by max(its keys' max, the sink) from the start, so the
    // cells take the same exponentials as the sum.
    if (m_rule.hasSinks()) shift = std::max(shift, m_rule.sink(head));
    // (the shift is the row's max: the exponents are <= 0 up to rounding, clamped)
    for (std::int64_t t = 0; t < count; ++t) e[t] = std::min(s[t] - shift, 0.0f);
    if (anyPadding)
        for (std::int64_t j = begin; j < end; ++j)
            if (padded(j)) e[j - begin] = -1000.0f;
    expNonPositiveInPlace(e, count);
    sum = sumInDouble(e, count);
    if (m_rule.hasSinks()) sum += std::exp(static_cast<double>(m_rule.sink(head)) - static_cast<double>(shift));
}

const KeyPanels& SoftmaxRowWeights::panelsOf(int head) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_panels.empty()) {
        m_panels.resize(static_cast<std::size_t>(heads()));
        m_norms.resize(static_cast<std::size_t>(heads()));
    }
    auto& panels = m_panels[static_cast<std::size_t>(head)];
    if (!panels) {
        panels = std::make_shared<const KeyPanels>(m_k.data.get() + head * keys() * m_d, keys(), m_d);
        RowNorms& norms = m_norms[static_cast<std::size_t>(head)];
        norms.shift.assign(static_cast<std::size_t>(queries()), std::numeric_limits<float>::quiet_NaN());
        norms.sum.assign(static_cast<std::size_t>(queries()), 0.0);
    }
    return *panels;  // (never replaced once made)
}

bool SoftmaxRowWeights::knownNorms(int head, std::int64_t i0, std::int64_t i1, float* shift, double* sum) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    const RowNorms& norms = m_norms[static_cast<std::size_t>(head)];
    bool all = true;
    for (std::int64_t i = i0; i < i1; ++i) {
        shift[i - i0] = norms.shift[static_cast<std::size_t>(i)];
        sum[i - i0] = norms.sum[static_cast<std::size_t>(i)];
        all = all && !std::isnan(shift[i - i0]);
    }
    return all;
}

void SoftmaxRowWeights::fillTile(WeightTile& out) const {
    constexpr std::int64_t kBlock = 16;  // query rows scored together
    const std::int64_t n = queries(), cols = out.cols();
    const KeyPanels& panels = panelsOf(out.head);
    const float* qh = m_q.data.get() + out.head * n * m_d;
    const bool reasons = !out.reasons.empty();
    std::vector<float> scores, exponentials;
    float shift[kBlock];
    double sum[kBlock];
    bool cellsDone[kBlock];
    for (std::int64_t i0 = out.r0; i0 < out.r1; i0 += kBlock) {
        const std::int64_t i1 = std::min(i0 + kBlock, out.r1);
        // Rows met for the first time are scored over every key they see: their norms, and this
        // tile's cells from the same scores; otherwise only the tile's keys. (A row's first and
        // last keys never decrease with i.)
        const bool known = knownNorms(out.head, i0, i1, shift, sum);
        std::int64_t from = out.c0, to = out.c1;
        if (!known) {
            from = std::min(from, m_rule.begin(i0));
            to = std::max(to, m_rule.end(i1 - 1));
        }
        const std::int64_t width = to - from;
        scores.resize(static_cast<std::size_t>((i1 - i0) * width));
        panels.score(qh, i0, i1, from, to, scores.data(), width);
        for (std::int64_t i = i0; i < i1; ++i) m_rule.scoreRow(out.head, i, from, to, scores.data() + (i - i0) * width);
        std::fill_n(cellsDone, kBlock, false);
        if (!known) {
            for (std::int64_t i = i0; i < i1; ++i) {
                if (!std::isnan(shift[i - i0])) continue;
                const std::int64_t b = m_rule.begin(i), e = std::max(m_rule.end(i), b);
                const bool padded = !m_queryPadding.empty() && m_queryPadding[static_cast<std::size_t>(i)];
                // A tile holding the row's every key takes the exponentials of its norm as its
                // cells (the overview's case); otherwise they go to scratch and the cells below
                // take the same ones again.
                const bool whole = !padded && b >= out.c0 && e <= out.c1;
                float* exps = out.weights.data() + (i - out.r0) * cols + (b - out.c0);
                if (!whole) {
                    exponentials.resize(static_cast<std::size_t>(e - b));
                    exps = exponentials.data();
                }
                rowExponentials(out.head, scores.data() + (i - i0) * width + (b - from), b, e, exps, shift[i - i0], sum[i - i0]);
                if (whole && sum[i - i0] > 0) {
                    const auto inv = static_cast<float>(1.0 / sum[i - i0]);
                    for (std::int64_t t = 0; t < e - b; ++t) exps[t] *= inv;
                }
                cellsDone[i - i0] = whole;
            }
            std::lock_guard<std::mutex> lock(m_mutex);
            RowNorms& norms = m_norms[static_cast<std::size_t>(out.head)];
            for (std::int64_t i = i0; i < i1; ++i) {
                norms.shift[static_cast<std::size_t>(i)] = shift[i - i0];
                norms.sum[static_cast<std::size_t>(i)] = sum[i - i0];
            }
        }
        for (std::int64_t i = i0; i < i1; ++i) {
            float* w = out.weights.data() + (i - out.r0) * cols;
            const std::int64_t cellBegin = std::clamp(m_rule.begin(i), out.c0, out.c1);
            const std::int64_t cellEnd = std::clamp(m_rule.end(i), cellBegin, out.c1);
            if (reasons) {
                std::fill_n(out.reasons.begin() + (i - out.r0) * cols + (cellBegin - out.c0), cellEnd - cellBegin, m_reason);
                std::fill_n(out.multiplicity.begin() + (i - out.r0) * cols + (cellBegin - out.c0), cellEnd - cellBegin,
                            std::uint8_t{1});
            }
            const bool padded = !m_queryPadding.empty() && m_queryPadding[static_cast<std::size_t>(i)];
            if (cellsDone[i - i0] || padded || cellEnd == cellBegin || !(sum[i - i0] > 0)) continue;  // (weights arrive zeroed)
            const float* s = scores.data() + (i - i0) * width + (cellBegin - from);
            const auto inv = static_cast<float>(1.0 / sum[i - i0]);
            float* cells = w + (cellBegin - out.c0);
            const std::int64_t count = cellEnd - cellBegin;
            // (the shift is the row's max: the exponents are <= 0 up to rounding, clamped)
            for (std::int64_t t = 0; t < count; ++t) cells[t] = std::min(s[t] - shift[i - i0], 0.0f);
            expNonPositiveInPlace(cells, count);
            for (std::int64_t t = 0; t < count; ++t) cells[t] *= inv;
            if (!m_keyPadding.empty())
                for (std::int64_t j = cellBegin; j < cellEnd; ++j)
                    if (m_keyPadding[static_cast<std::size_t>(j)]) w[j - out.c0] = 0.0f;
        }
    }
}

bool SoftmaxRowWeights::visitRows(int head, std::int64_t r0, std::int64_t r1, const RowVisitor& visit) const {
    if (m_rule.window <= 0) return DenseRowWeights::visitRows(head, r0, r1, visit);
    constexpr std::int64_t kRowsPerTile = 8;
    std::vector<std::int32_t> keys;
    std::vector<float> weights;
    std::vector<ReasonBits> reasons;
    std::vector<std::uint8_t> multiplicity;
    for (std::int64_t i0 = r0; i0 < r1; i0 += kRowsPerTile) {
        const std::int64_t i1 = std::min(r1, i0 + kRowsPerTile);
        const std::int64_t lo = m_rule.begin(i0), hi = std::max(m_rule.end(i1 - 1), lo);
        const WeightTile t = tile(head, i0, i1, lo, hi, /*withReasons=*/true);
        for (std::int64_t i = i0; i < i1; ++i) {
            keys.clear();
            weights.clear();
            reasons.clear();
            multiplicity.clear();
            for (std::int64_t j = lo; j < hi; ++j) {
                const auto cell = static_cast<std::size_t>((i - i0) * (hi - lo) + (j - lo));
                if (t.reasons[cell] == 0) continue;
                keys.push_back(static_cast<std::int32_t>(j));
                weights.push_back(t.weights[cell]);
                reasons.push_back(t.reasons[cell]);
                multiplicity.push_back(t.multiplicity[cell]);
            }
            RowEntries row;
            row.query = i;
            row.count = static_cast<std::int64_t>(keys.size());
            row.keys = keys.data();
            row.weights = weights.data();
            row.reasons = reasons.data();
            row.multiplicity = multiplicity.data();
            if (!visit(row)) return false;
        }
    }
    return true;
}

}  // namespace attnscope::engine
