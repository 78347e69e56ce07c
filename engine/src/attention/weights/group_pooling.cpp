// Which of a pattern's groups pattern_overview.cpp may pool as the kernel computes them: the
// plan's rows each in one group (or split only by its strided rule, whose keys lie beyond the
// groups'), and per group whether its segments can list a key twice.

#include "attention/weights/pattern_overview.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace attnscope::engine {
namespace {

// The keys a segment may list, first to last, and (gathered keys) whether every one is excluded.
struct KeySpan {
    std::int64_t first = 0, last = -1;
    bool allExcluded = false;
};

class SpanCache {
public:
    explicit SpanCache(const DensePlan& plan) : m_plan(plan) {}
    KeySpan of(const DenseSegment& seg) {
        KeySpan s;
        if (seg.keyCount <= 0) return s;
        if (!seg.gathered) {
            s.first = seg.keyStart;
            s.last = seg.keyStart + (seg.keyCount - 1) * seg.keyStep;
            return s;
        }
        auto [it, made] = m_gathered.try_emplace({seg.keyStart, seg.keyCount});
        if (made) {
            KeySpan& g = it->second;
            g.first = std::numeric_limits<std::int64_t>::max();
            g.last = std::numeric_limits<std::int64_t>::min();
            g.allExcluded = !m_plan.excluded.empty();
            for (std::int64_t t = 0; t < seg.keyCount; ++t) {
                const std::int64_t key = m_plan.gatheredKeys[static_cast<std::size_t>(seg.keyStart + t)];
                g.first = std::min(g.first, key);
                g.last = std::max(g.last, key);
                g.allExcluded = g.allExcluded && m_plan.excluded[static_cast<std::size_t>(key)] != 0;
            }
        }
        return it->second;
    }

private:
    const DensePlan& m_plan;
    std::map<std::pair<std::int64_t, std::int64_t>, KeySpan> m_gathered;
};

// Whether two segments of one group can never list the same key (conservative: false when unsure).
bool disjoint(const DenseSegment& a, const DenseSegment& b, SpanCache& spans) {
    const KeySpan sa = spans.of(a), sb = spans.of(b);
    if (sa.last < sa.first || sb.last < sb.first) return true;
    if (sa.last < sb.first || sb.last < sa.first) return true;
    if (!a.gathered && !b.gathered) return a.keyStep == b.keyStep && (a.keyStart - b.keyStart) % a.keyStep != 0;
    if (a.gathered != b.gathered) return (a.gathered ? sa : sb).allExcluded && (a.gathered ? b : a).skipExcluded;
    return false;
}

// Whether every row lies in at most one group.
bool rowsInOneGroup(const DensePlan& plan, std::int64_t n) {
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)), 0);
    for (const DenseGroup& g : plan.groups)
        for (std::int64_t t = 0; t < g.rowCount; ++t) {
            const std::int64_t i = g.rowStart + t * g.rowStep;
            if (i < 0 || i >= n || seen[static_cast<std::size_t>(i)]++) return false;
        }
    return true;
}

// Whether the groups give each row only keys within the strided rule's reach (the rule's keys are
// gap·step or more away), so that no key comes from both.
bool groupsWithinStrideReach(const DensePlan& plan) {
    const std::int64_t reach = plan.strided.gap * plan.strided.step;
    for (const DenseGroup& g : plan.groups)
        for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
            const DenseSegment& seg = plan.segments[static_cast<std::size_t>(si)];
            if (seg.gathered || seg.keyStep != 1) return false;
            for (std::int64_t t = 0; t < g.rowCount; ++t) {
                const std::int64_t i = g.rowStart + t * g.rowStep;
                std::int64_t lo = 0, hi = 0;
                plan.allowedInSegment(i, si - g.segBegin, seg, lo, hi);
                if (lo >= hi) continue;
                if (seg.keyStart + lo <= i - reach) return false;
                if (plan.strided.above && seg.keyStart + hi - 1 >= i + reach) return false;
            }
        }
    return true;
}

}  // namespace

std::shared_ptr<const GroupPooling> makeGroupPooling(const DensePlan& plan, std::int64_t n, std::int64_t m) {
    if (!rowsInOneGroup(plan, n)) return nullptr;
    if (plan.strided.step > 0 && !groupsWithinStrideReach(plan)) return nullptr;
    auto out = std::make_shared<GroupPooling>();
    // The plan's own groups, each checked; the strided rule's groups (appended) list keys the
    // others do not (checked above) and their two segments, below and above, apart by 2·gap·step.
    SpanCache spans(plan);
    out->byRows.assign(plan.groups.size(), 0);
    for (std::size_t gi = 0; gi < plan.groups.size(); ++gi) {
        const DenseGroup& g = plan.groups[gi];
        for (std::int64_t a = g.segBegin; a < g.segEnd && !out->byRows[gi]; ++a)
            for (std::int64_t b = a + 1; b < g.segEnd && !out->byRows[gi]; ++b)
                if (!disjoint(plan.segments[static_cast<std::size_t>(a)], plan.segments[static_cast<std::size_t>(b)], spans))
                    out->byRows[gi] = 1;
    }
    if (plan.strided.step > 0) {
        // a row visit lists the rule's keys too, which the appended groups also pool
        if (std::find(out->byRows.begin(), out->byRows.end(), 1) != out->byRows.end()) return nullptr;
        out->plan = expandStridedRule(plan, n, m);
        out->byRows.resize(out->plan.groups.size(), 0);
    } else {
        out->plan = plan;
    }
    const DensePlan& p = out->plan;
    if (!p.excluded.empty()) {
        out->excludedBefore.assign(p.excluded.size() + 1, 0);
        for (std::size_t j = 0; j < p.excluded.size(); ++j)
            out->excludedBefore[j + 1] = out->excludedBefore[j] + (p.excluded[j] != 0);
    }
    return out;
}

}  // namespace attnscope::engine
