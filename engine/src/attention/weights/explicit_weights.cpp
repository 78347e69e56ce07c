// AttentionWeights over weights given in full (attnscope/explicit_weights.h).

#include <attnscope/explicit_weights.h>

#include "attention/weights/dense_row_weights.h"
#include "attention/weights/sparse_row_weights.h"

#include <algorithm>
#include <stdexcept>

namespace attnscope::engine {
namespace {

class DenseMatrixWeights final : public DenseRowWeights {
public:
    DenseMatrixWeights(std::int64_t heads, std::int64_t n, std::int64_t m, std::vector<float> values,
                       std::vector<std::uint8_t> reasons)
        : DenseRowWeights(heads, n, m), m_values(std::move(values)), m_reasons(std::move(reasons)) {
        if (static_cast<std::int64_t>(m_values.size()) != heads * n * m ||
            (!m_reasons.empty() && m_reasons.size() != m_values.size()))
            throw std::invalid_argument("explicit weights: values and reasons must be [heads, n, m]");
    }

private:
    void fillTile(WeightTile& out) const override {
        const std::int64_t n = queries(), m = keys(), cols = out.cols();
        for (std::int64_t i = out.r0; i < out.r1; ++i) {
            const std::size_t src = static_cast<std::size_t>((out.head * n + i) * m + out.c0);
            const std::size_t dst = static_cast<std::size_t>((i - out.r0) * cols);
            std::copy_n(m_values.begin() + static_cast<std::ptrdiff_t>(src), cols, out.weights.begin() + static_cast<std::ptrdiff_t>(dst));
            if (out.reasons.empty()) continue;
            for (std::int64_t t = 0; t < cols; ++t) {
                const std::uint8_t why = m_reasons.empty() ? static_cast<std::uint8_t>(PatternReason::Dense)
                                                           : m_reasons[src + static_cast<std::size_t>(t)];
                if (why == kNotListed) continue;
                out.reasons[dst + static_cast<std::size_t>(t)] = static_cast<ReasonBits>(1u << why);
                out.multiplicity[dst + static_cast<std::size_t>(t)] = 1;
            }
        }
    }

    std::vector<float> m_values;
    std::vector<std::uint8_t> m_reasons;
};

class ListedWeights final : public SparseRowWeights {
public:
    ListedWeights(std::int64_t heads, SparsePattern pattern, std::vector<float> aligned)
        : SparseRowWeights(heads, pattern.rows, pattern.cols), m_pattern(std::move(pattern)), m_aligned(std::move(aligned)) {
        const std::int64_t rowSets = m_pattern.perHead ? heads : 1;
        if (static_cast<std::int64_t>(m_pattern.rowPtr.size()) != rowSets * m_pattern.rows + 1 ||
            m_pattern.reason.size() != m_pattern.colIdx.size() ||
            static_cast<std::int64_t>(m_aligned.size()) != m_pattern.nnz() * (m_pattern.perHead ? 1 : heads))
            throw std::invalid_argument("listed weights: row pointers, reasons and weights do not fit the pattern");
    }

private:
    std::int64_t rowOf(int head, std::int64_t i) const { return (m_pattern.perHead ? head * m_pattern.rows : 0) + i; }

    void rowKeys(int head, std::int64_t i, Scratch& s) const override {
        s.keys.clear();
        s.sort.clear();
        const std::int64_t row = rowOf(head, i);
        for (std::int64_t e = m_pattern.rowPtr[static_cast<std::size_t>(row)]; e < m_pattern.rowPtr[static_cast<std::size_t>(row + 1)]; ++e)
            s.sort.emplace_back(m_pattern.colIdx[static_cast<std::size_t>(e)], m_pattern.reason[static_cast<std::size_t>(e)]);
        mergeListing(s);
    }

    void rowWeights(int head, std::int64_t i, Scratch& s, std::int64_t t0, std::int64_t t1) const override {
        std::fill(s.weights.begin() + t0, s.weights.begin() + t1, 0.0f);
        const std::int64_t row = rowOf(head, i);
        const std::int64_t base = m_pattern.perHead ? 0 : head * m_pattern.nnz();
        const auto& keys = s.keys.keys;
        for (std::int64_t e = m_pattern.rowPtr[static_cast<std::size_t>(row)]; e < m_pattern.rowPtr[static_cast<std::size_t>(row + 1)]; ++e) {
            const auto it = std::lower_bound(keys.begin() + t0, keys.begin() + t1, m_pattern.colIdx[static_cast<std::size_t>(e)]);
            if (it != keys.begin() + t1 && *it == m_pattern.colIdx[static_cast<std::size_t>(e)])
                s.weights[static_cast<std::size_t>(it - keys.begin())] += m_aligned[static_cast<std::size_t>(base + e)];
        }
    }

    SparsePattern m_pattern;
    std::vector<float> m_aligned;
};

}  // namespace

std::shared_ptr<const AttentionWeights> makeDenseWeights(std::int64_t heads, std::int64_t n, std::int64_t m,
                                                         std::vector<float> values, std::vector<std::uint8_t> reasons) {
    return std::make_shared<DenseMatrixWeights>(heads, n, m, std::move(values), std::move(reasons));
}

std::shared_ptr<const AttentionWeights> makeListedWeights(std::int64_t heads, SparsePattern pattern,
                                                          std::vector<float> aligned) {
    return std::make_shared<ListedWeights>(heads, std::move(pattern), std::move(aligned));
}

}  // namespace attnscope::engine
