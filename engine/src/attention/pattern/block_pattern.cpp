#include "attention/pattern/block_pattern.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace attnscope::engine {

void DensePlan::addGroup(std::int64_t rowStart, std::int64_t rowStep, std::int64_t rowCount,
                         std::initializer_list<DenseSegment> segs, std::int64_t masked) {
    beginGroup(rowStart, rowStep, rowCount);
    std::int64_t index = 0;
    for (const auto& seg : segs)
        addSegment(seg.keyStart, seg.keyStep, seg.keyCount, index++ < masked, seg.reason, seg.skipExcluded);
}

void DensePlan::beginGroup(std::int64_t rowStart, std::int64_t rowStep, std::int64_t rowCount) {
    DenseGroup g;
    g.rowStart = rowStart;
    g.rowStep = rowStep;
    g.rowCount = rowCount;
    g.segBegin = g.segEnd = static_cast<std::int64_t>(segments.size());
    groups.push_back(g);
}

void DensePlan::addSegment(std::int64_t keyStart, std::int64_t keyStep, std::int64_t keyCount, bool masked,
                           PatternReason reason, bool skipExcluded) {
    segments.push_back(DenseSegment{keyStart, keyStep, keyCount, masked, false, reason, skipExcluded});
    groups.back().segEnd = static_cast<std::int64_t>(segments.size());
}

void DensePlan::addGatheredSegment(std::int64_t first, std::int64_t count, bool masked, PatternReason reason) {
    segments.push_back(DenseSegment{first, 1, count, masked, true, reason, false});
    groups.back().segEnd = static_cast<std::int64_t>(segments.size());
}

void DensePlan::allowedInSegment(std::int64_t i, std::int64_t segInGroup, const DenseSegment& seg, std::int64_t& lo,
                                 std::int64_t& hi) const {
    lo = 0;
    hi = seg.keyCount;
    if (!seg.masked) return;
    range(i, segInGroup, seg, lo, hi);
    lo = std::clamp<std::int64_t>(lo, 0, seg.keyCount);
    hi = std::clamp<std::int64_t>(hi, lo, seg.keyCount);
}

PatternRows::PatternRows(std::shared_ptr<const DensePlan> plan, std::int64_t n, std::int64_t m)
    : m_plan(std::move(plan)), m_n(n), m_m(m) {
    // groups of each row: a counting pass, then the lists (CSR)
    m_rowStart.assign(static_cast<std::size_t>(n + 1), 0);
    const auto& groups = m_plan->groups;
    for (const auto& g : groups)
        for (std::int64_t t = 0; t < g.rowCount; ++t) {
            const std::int64_t i = g.rowStart + t * g.rowStep;
            if (i < 0 || i >= n) throw std::invalid_argument("pattern group row outside [0, n)");
            ++m_rowStart[static_cast<std::size_t>(i + 1)];
        }
    for (std::int64_t i = 0; i < n; ++i) m_rowStart[static_cast<std::size_t>(i + 1)] += m_rowStart[static_cast<std::size_t>(i)];
    m_groupOf.resize(static_cast<std::size_t>(m_rowStart.back()));
    std::vector<std::int64_t> fill(m_rowStart.begin(), m_rowStart.end() - 1);
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        const auto& g = groups[gi];
        for (std::int64_t t = 0; t < g.rowCount; ++t)
            m_groupOf[static_cast<std::size_t>(fill[static_cast<std::size_t>(g.rowStart + t * g.rowStep)]++)] =
                static_cast<std::int32_t>(gi);
    }
}

// Runs of a listing merged one by one; more are sorted.
constexpr std::size_t kMergedRuns = 8;

void mergeKeyListing(std::vector<std::pair<std::int32_t, std::uint8_t>>& listing, RowKeys& out) {
    out.clear();
    // A listing is a few ascending runs (a band, its globals, its strided keys): merged run by run
    // in place, each merge stable, as a stable sort would order them (a sort for many runs).
    const auto byKey = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::array<std::size_t, kMergedRuns + 1> runStart{};
    std::size_t runs = 0;
    for (std::size_t t = 1; t < listing.size() && runs <= kMergedRuns; ++t)
        if (listing[t].first < listing[t - 1].first && ++runs <= kMergedRuns) runStart[runs] = t;
    if (runs > kMergedRuns) {
        std::stable_sort(listing.begin(), listing.end(), byKey);
    } else {
        for (std::size_t r = 1; r <= runs; ++r) {
            const auto end = r < runs ? listing.begin() + static_cast<std::ptrdiff_t>(runStart[r + 1]) : listing.end();
            std::inplace_merge(listing.begin(), listing.begin() + static_cast<std::ptrdiff_t>(runStart[r]), end, byKey);
        }
    }
    for (const auto& [key, why] : listing) {
        const auto bit = static_cast<std::uint16_t>(1u << why);
        if (!out.keys.empty() && out.keys.back() == key) {
            if (out.multiplicity.back() < 255) ++out.multiplicity.back();
            out.reasons.back() |= bit;
            continue;
        }
        out.keys.push_back(key);
        out.multiplicity.push_back(1);
        out.reasons.push_back(bit);
    }
}

template <class Fn>
void PatternRows::forEachSegment(std::int64_t i, Fn fn) const {
    const DensePlan& plan = *m_plan;
    for (std::int64_t e = m_rowStart[static_cast<std::size_t>(i)]; e < m_rowStart[static_cast<std::size_t>(i + 1)]; ++e) {
        const DenseGroup& g = plan.groups[static_cast<std::size_t>(m_groupOf[static_cast<std::size_t>(e)])];
        for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
            const DenseSegment& seg = plan.segments[static_cast<std::size_t>(si)];
            std::int64_t lo = 0, hi = 0;
            plan.allowedInSegment(i, si - g.segBegin, seg, lo, hi);
            fn(seg, lo, hi);
        }
    }
}

std::int64_t PatternRows::keyAt(const DenseSegment& seg, std::int64_t t) const {
    return seg.gathered ? m_plan->gatheredKeys[static_cast<std::size_t>(seg.keyStart + t)] : seg.keyStart + t * seg.keyStep;
}

bool PatternRows::skips(const DenseSegment& seg, std::int64_t key) const {
    const auto& excluded = m_plan->excluded;
    return seg.skipExcluded && key < static_cast<std::int64_t>(excluded.size()) && excluded[static_cast<std::size_t>(key)];
}

void PatternRows::rowKeys(std::int64_t i, RowKeys& out, std::vector<std::pair<std::int32_t, std::uint8_t>>& scratch) const {
    scratch.clear();
    const auto add = [&](std::int64_t key, PatternReason reason) {
        if (key >= 0 && key < m_m) scratch.emplace_back(static_cast<std::int32_t>(key), static_cast<std::uint8_t>(reason));
    };
    forEachSegment(i, [&](const DenseSegment& seg, std::int64_t lo, std::int64_t hi) {
        for (std::int64_t t = lo; t < hi; ++t)
            if (const std::int64_t key = keyAt(seg, t); !skips(seg, key)) add(key, seg.reason);
    });
    if (const auto& s = m_plan->strided; s.step > 0) {
        for (std::int64_t j = i - s.gap * s.step; j >= 0; j -= s.step) add(j, PatternReason::Stride);
        if (s.above)
            for (std::int64_t j = i + s.gap * s.step; j < m_m; j += s.step) add(j, PatternReason::Stride);
    }
    mergeKeyListing(scratch, out);
}

std::int64_t PatternRows::rowEntries(std::int64_t i) const {
    const DensePlan& plan = *m_plan;
    std::int64_t count = 0;
    forEachSegment(i, [&](const DenseSegment& seg, std::int64_t lo, std::int64_t hi) {
        count += hi - lo;
        if (seg.skipExcluded && !plan.excluded.empty())
            for (std::int64_t t = lo; t < hi; ++t) count -= skips(seg, keyAt(seg, t));
    });
    if (const auto& s = plan.strided; s.step > 0) {
        const std::int64_t below = i - s.gap * s.step;
        if (below >= 0) count += below / s.step + 1;
        if (s.above) {
            const std::int64_t above = i + s.gap * s.step;
            if (above < m_m) count += (m_m - 1 - above) / s.step + 1;
        }
    }
    return count;
}

}  // namespace attnscope::engine
