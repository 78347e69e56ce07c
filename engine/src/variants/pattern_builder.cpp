// Helpers the pattern variants share: building their CSR pattern row by row, their memory
// estimate, parameter-schema shorthands and input checks (split from sparse_kernel.cpp, which
// keeps the attention computation itself).

#include "variants/sparse_kernel.h"

#include <algorithm>
#include <cstring>

namespace attnscope::engine {

PatternBuilder::PatternBuilder(std::int64_t rows, std::int64_t cols, bool perHead, std::int64_t reserveEntries) {
    m_pattern.rows = rows;
    m_pattern.cols = cols;
    m_pattern.perHead = perHead;
    m_pattern.rowPtr.reserve(static_cast<std::size_t>(rows) + 1);
    m_pattern.rowPtr.push_back(0);
    m_pattern.colIdx.reserve(static_cast<std::size_t>(std::max<std::int64_t>(reserveEntries, 0)));
    m_pattern.reason.reserve(static_cast<std::size_t>(std::max<std::int64_t>(reserveEntries, 0)));
}

void PatternBuilder::endRow(bool keepDuplicates) {
    const bool sorted =
        std::is_sorted(m_row.begin(), m_row.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
    if (!sorted)
        std::stable_sort(m_row.begin(), m_row.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
    for (std::size_t e = 0; e < m_row.size(); ++e) {
        if (!keepDuplicates && e > 0 && m_row[e].key == m_row[e - 1].key) continue;
        m_pattern.colIdx.push_back(m_row[e].key);
        m_pattern.reason.push_back(m_row[e].reason);
    }
    m_pattern.rowPtr.push_back(static_cast<std::int64_t>(m_pattern.colIdx.size()));
    m_row.clear();
    m_sideHoldsLastRow = false;
}

PatternBuilder::PatternBuilder(BufferPool& pool, std::int64_t rows, std::int64_t cols, bool perHead,
                               std::int64_t rowSets, std::int64_t reserveEntries) {
    m_pattern.rows = rows;
    m_pattern.cols = cols;
    m_pattern.perHead = perHead;
    const auto entries = static_cast<std::size_t>(std::max<std::int64_t>(reserveEntries, 0));
    m_pattern.rowPtr = pool.take<std::int64_t>(static_cast<std::size_t>(std::max<std::int64_t>(rowSets, 1) * rows) + 1);
    m_pattern.rowPtr.push_back(0);
    m_pattern.colIdx = pool.take<std::int32_t>(entries);
    m_pattern.reason = pool.take<std::uint8_t>(entries);
}

void PatternBuilder::repeatLastRow() {
    auto& rp = m_pattern.rowPtr;
    const auto b = static_cast<std::size_t>(rp[rp.size() - 2]), e = static_cast<std::size_t>(rp.back());
    // Copy through a small side buffer: inserting a vector's own range into itself is not allowed.
    if (!m_sideHoldsLastRow) {
        m_lastCols.assign(m_pattern.colIdx.begin() + static_cast<std::ptrdiff_t>(b),
                          m_pattern.colIdx.begin() + static_cast<std::ptrdiff_t>(e));
        m_lastReasons.assign(m_pattern.reason.begin() + static_cast<std::ptrdiff_t>(b),
                             m_pattern.reason.begin() + static_cast<std::ptrdiff_t>(e));
        m_sideHoldsLastRow = true;
    }
    m_pattern.colIdx.insert(m_pattern.colIdx.end(), m_lastCols.begin(), m_lastCols.end());
    m_pattern.reason.insert(m_pattern.reason.end(), m_lastReasons.begin(), m_lastReasons.end());
    rp.push_back(static_cast<std::int64_t>(m_pattern.colIdx.size()));
}

SparsePattern PatternBuilder::finish() { return std::move(m_pattern); }

std::uint64_t sparsePatternBytes(const ProblemShape& s, double entriesPerHead, bool perHead, bool keepWeights) {
    const double heads = static_cast<double>(s.heads);
    const double listed = perHead ? entriesPerHead * heads : entriesPerHead;
    // pattern (I32 column + U8 reason), weights (F32 per head), kernel scratch (scores + owner)
    double bytes = listed * 5 + entriesPerHead * heads * 4 + entriesPerHead * 8 + static_cast<double>(s.n) * heads * 8;
    if (keepWeights) bytes += static_cast<double>(s.n) * static_cast<double>(s.m) * heads * 5;
    return static_cast<std::uint64_t>(bytes);
}

ParamSpec boolParam(const std::string& name, bool value, const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Bool;
    p.defaultValue = value;
    p.minValue = 0;
    p.maxValue = 1;
    p.help = help;
    return p;
}

ParamSpec intParam(const std::string& name, std::int64_t value, double minValue, double maxValue, const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Int;
    p.defaultValue = value;
    p.minValue = minValue;
    p.maxValue = maxValue;
    p.help = help;
    return p;
}

ParamSpec choiceParam(const std::string& name, const std::string& value, std::vector<std::string> choices,
                      const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::Choice;
    p.defaultValue = value;
    p.choices = std::move(choices);
    p.help = help;
    return p;
}

ParamSpec intListParam(const std::string& name, std::vector<std::int64_t> value, double minValue, double maxValue,
                       const std::string& help) {
    ParamSpec p;
    p.name = name;
    p.type = ParamType::IntList;
    p.defaultValue = std::move(value);
    p.minValue = minValue;
    p.maxValue = maxValue;
    p.help = help;
    return p;
}

void runPatternVariant(const Qkv& qkv, SparsePattern pattern, const SparseTileFn& tiles, RunContext& ctx,
                       AttentionResult& result, const DensePlanFn& densePlan) {
    result.pattern = std::move(pattern);
    SparseKernelInput input;
    input.pattern = &result.pattern;
    input.tilesForHead = tiles;
    input.keyPadding = qkv.keyPadding;
    input.queryPadding = selfQueryPadding(qkv);
    input.keepWeights = ctx.keepPatternWeights || ctx.keepWeights;
    input.slot = result.variantId;
    input.densePlan = densePlan;
    ctx.beginStage("attention");
    runSparseKernel(qkv.q, qkv.k, qkv.v, input, ctx, result);
    ctx.endStage();
    result.counters = ctx.counters();
}

void addResidueTiles(SparseTiles& tiles, std::int64_t n, std::int64_t m, std::int64_t period, std::int64_t rowsPerTile,
                     const std::function<std::pair<std::int64_t, std::int64_t>(std::int64_t, std::int64_t)>& keySpan) {
    for (std::int64_t r = 0; r < std::min(period, n); ++r) {
        const std::int64_t rows = (n - r + period - 1) / period;
        const std::int64_t keys = (m - r + period - 1) / period;  // keys r + s·P < m
        for (std::int64_t u0 = 0; u0 < rows; u0 += rowsPerTile) {
            const std::int64_t u1 = std::min(rows, u0 + rowsPerTile);
            auto [s0, s1] = keySpan(u0, u1);
            s0 = std::max<std::int64_t>(s0, 0);
            s1 = std::min(s1, keys);
            if (s1 > s0) tiles.addRange(r + u0 * period, period, u1 - u0, r + s0 * period, period, s1 - s0);
        }
    }
}

void requireSelfAttention(const std::string& variant, const Qkv& qkv) {
    if (qkv.m() != qkv.n())
        throw EngineError(ErrorCode::InvalidArgument, variant + " needs as many keys as queries (self-attention); got n = " +
                                                          std::to_string(qkv.n()) + " queries and m = " +
                                                          std::to_string(qkv.m()) + " keys");
}

std::vector<std::uint8_t> selfQueryPadding(const Qkv& qkv) {
    if (qkv.m() != qkv.n()) return {};
    return qkv.keyPadding;
}

}  // namespace attnscope::engine
