#include "attention/weights/pattern_overview.h"

#include "attention/weights/overview_cells.h"
#include "base/kernels/cpu_features.h"
#include "base/kernels/row_exp.h"
#include "base/kernels/small_gemm.h"
#include "base/runtime/worker_threads.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

namespace attnscope::engine {
namespace {

// Rows scored together and keys per product: scores of 32 x 1024, 128 KiB, stay in L2.
constexpr std::int64_t kRowBlock = 32;
constexpr std::int64_t kKeyTile = 1024;
// Blocks of rows an overview is cut into: enough for two threads to share and for keepGoing to be
// polled often, few enough that a block holds many rows of each residue group (sparse_strided's
// strided keys: rows 1,024 apart at a million tokens), whose keys each product then reads once.
constexpr std::int64_t kBlocksPerOverview = 32;
constexpr std::int64_t kMinBlockRows = 256;

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

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

// One thread's buffers.
struct GroupScratch {
    std::vector<float> queries, keys, scores;
    std::vector<std::int64_t> lo, hi;
};

// The rows of one block of the overview, group by group, on one thread.
class BlockPooling {
public:
    BlockPooling(const GroupPooling& pooling, const PatternHead& head, WeightOverview& out, ReasonEntries& entries,
                 GroupScratch& s)
        : m_pooling(pooling), m_plan(pooling.plan), m_head(head), m_out(out), m_entries(entries), m_s(s) {
        m_s.queries.resize(static_cast<std::size_t>(kRowBlock * head.d));
        m_s.keys.resize(static_cast<std::size_t>(kKeyTile * head.d));
        m_s.scores.resize(static_cast<std::size_t>(kRowBlock * kKeyTile));
        m_s.lo.resize(kRowBlock);
        m_s.hi.resize(kRowBlock);
    }

    /// Rows [i0, i1) of every group that holds some.
    void addRows(std::int64_t i0, std::int64_t i1) {
        for (std::size_t gi = 0; gi < m_plan.groups.size(); ++gi) {
            const DenseGroup& g = m_plan.groups[gi];
            const std::int64_t u0 = std::max<std::int64_t>(0, ceilDiv(i0 - g.rowStart, g.rowStep));
            const std::int64_t u1 = std::min(g.rowCount, ceilDiv(i1 - g.rowStart, g.rowStep));
            if (u0 >= u1) continue;
            if (m_pooling.byRows[gi]) {
                visitRows(g, u0, u1);
                continue;
            }
            for (std::int64_t b0 = u0; b0 < u1; b0 += kRowBlock) scoreRows(g, b0, std::min(u1, b0 + kRowBlock));
        }
    }

private:
    std::int64_t rowOf(const DenseGroup& g, std::int64_t u) const { return g.rowStart + u * g.rowStep; }

    void visitRows(const DenseGroup& g, std::int64_t u0, std::int64_t u1) {
        for (std::int64_t u = u0; u < u1; ++u) {
            const std::int64_t i = rowOf(g, u);
            m_head.weights->forEachRow(m_head.head, i, i + 1, [&](const RowEntries& row) {
                addVisitedRow(m_out, row, m_entries);
                return true;
            });
        }
    }

    // Group rows [u0, u1) (at most kRowBlock): each segment's keys scored in tiles, their weights
    // pooled row by row.
    void scoreRows(const DenseGroup& g, std::int64_t u0, std::int64_t u1) {
        const std::int64_t rows = u1 - u0, d = m_head.d;
        const float* q = m_head.q + rowOf(g, u0) * d;
        if (g.rowStep != 1) {  // rows of one residue, far apart: copied together
            for (std::int64_t r = 0; r < rows; ++r)
                std::memcpy(m_s.queries.data() + r * d, m_head.q + rowOf(g, u0 + r) * d, static_cast<std::size_t>(d) * sizeof(float));
            q = m_s.queries.data();
        }
        for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
            const DenseSegment& seg = m_plan.segments[static_cast<std::size_t>(si)];
            std::int64_t x0 = 0, x1 = 0;
            if (!allowedPositions(g, seg, si - g.segBegin, u0, u1, x0, x1)) continue;
            for (std::int64_t t0 = x0; t0 < x1; t0 += kKeyTile) {
                const std::int64_t t1 = std::min(x1, t0 + kKeyTile), cols = t1 - t0;
                smallGemmABt(rows, cols, d, q, d, keyRows(seg, t0, t1), d, m_s.scores.data(), cols);
                for (std::int64_t r = 0; r < rows; ++r) {
                    const std::int64_t a = std::max(m_s.lo[r], t0), b = std::min(m_s.hi[r], t1);
                    if (a >= b) continue;
                    float* w = m_s.scores.data() + r * cols + (a - t0);
                    const std::int64_t i = rowOf(g, u0 + r);
                    toWeights(i, seg, a, w, b - a);
                    poolRow(i, seg, a, w, b - a);
                }
            }
        }
    }

    // Each row's allowed positions of the segment within the region's keys (m_s.lo, m_s.hi), and
    // their union [x0, x1); false when it is empty.
    bool allowedPositions(const DenseGroup& g, const DenseSegment& seg, std::int64_t segInGroup, std::int64_t u0,
                          std::int64_t u1, std::int64_t& x0, std::int64_t& x1) const {
        const OverviewRequest& r = m_out.region;
        std::int64_t ta = 0, tb = seg.keyCount;
        if (!seg.gathered) {
            ta = std::clamp<std::int64_t>(ceilDiv(r.c0 - seg.keyStart, seg.keyStep), 0, seg.keyCount);
            tb = std::clamp<std::int64_t>(ceilDiv(r.c1 - seg.keyStart, seg.keyStep), ta, seg.keyCount);
        }
        x0 = seg.keyCount;
        x1 = 0;
        for (std::int64_t u = u0; u < u1; ++u) {
            std::int64_t lo = 0, hi = 0;
            m_plan.allowedInSegment(rowOf(g, u), segInGroup, seg, lo, hi);
            lo = std::max(lo, ta);
            hi = std::min(hi, tb);
            m_s.lo[u - u0] = lo;
            m_s.hi[u - u0] = hi;
            if (lo < hi) {
                x0 = std::min(x0, lo);
                x1 = std::max(x1, hi);
            }
        }
        return x0 < x1;
    }

    std::int64_t keyAt(const DenseSegment& seg, std::int64_t t) const {
        return seg.gathered ? m_plan.gatheredKeys[static_cast<std::size_t>(seg.keyStart + t)] : seg.keyStart + t * seg.keyStep;
    }

    // The key rows of positions [t0, t1): in place when consecutive, else copied together.
    const float* keyRows(const DenseSegment& seg, std::int64_t t0, std::int64_t t1) {
        const std::int64_t d = m_head.d;
        if (!seg.gathered && seg.keyStep == 1) return m_head.k + (seg.keyStart + t0) * d;
        for (std::int64_t t = t0; t < t1; ++t)
            std::memcpy(m_s.keys.data() + (t - t0) * d, m_head.k + keyAt(seg, t) * d, static_cast<std::size_t>(d) * sizeof(float));
        return m_s.keys.data();
    }

    // Scores of row i at positions [a, a + count) into weights exp(s/√d − row_max) / row_sum
    // (0 for a padded or empty row, and for padded keys).
    void toWeights(std::int64_t i, const DenseSegment& seg, std::int64_t a, float* w, std::int64_t count) const {
        const auto at = static_cast<std::size_t>(i);
        const float sum = m_head.sum[at];
        const bool rowPadded = !m_head.queryPadding->empty() && (*m_head.queryPadding)[at];
        if (rowPadded || !(sum > 0.0f)) {
            std::fill(w, w + count, 0.0f);
            return;
        }
        const float scale = m_head.scale, shift = m_head.shift[at];
        // The kept shift is the kernel's reference (row_exp.h referenceShift), not always the row's
        // max: scores pass it by at most kMaxReferenceExcess, where exp is exact up to about 88.
        for (std::int64_t t = 0; t < count; ++t) w[t] = std::min(w[t] * scale - shift, kMaxReferenceExcess);
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
        if (haveAvx2Fma()) expNonPositiveAvx2(w, count);
        else
#endif
            for (std::int64_t t = 0; t < count; ++t) w[t] = std::exp(w[t]);
        const auto inv = static_cast<float>(1.0 / static_cast<double>(sum));
        for (std::int64_t t = 0; t < count; ++t) w[t] *= inv;
        if (const auto& padded = *m_head.keyPadding; !padded.empty())
            for (std::int64_t t = 0; t < count; ++t)
                if (padded[static_cast<std::size_t>(keyAt(seg, a + t))]) w[t] = 0.0f;
    }

    // Whether a consecutive run of keys [key, key + count) holds an excluded key the segment skips.
    bool skipsSome(const DenseSegment& seg, std::int64_t key, std::int64_t count) const {
        const auto& before = m_pooling.excludedBefore;
        return seg.skipExcluded && !before.empty() &&
               before[static_cast<std::size_t>(key + count)] != before[static_cast<std::size_t>(key)];
    }

    // Row i's weights of positions [a, a + count) into their cells.
    void poolRow(std::int64_t i, const DenseSegment& seg, std::int64_t a, const float* w, std::int64_t count) {
        const OverviewRequest& r = m_out.region;
        const auto bit = static_cast<ReasonBits>(1u << static_cast<unsigned>(seg.reason));
        const std::size_t rowCells = static_cast<std::size_t>((i - r.r0) / r.factor) * static_cast<std::size_t>(m_out.cols);
        const std::int64_t key0 = keyAt(seg, a);
        std::int64_t listed = count;
        if (!seg.gathered && seg.keyStep == 1 && !skipsSome(seg, key0, count))
            poolRun(rowCells, key0 - r.c0, w, count, bit);
        else
            listed = poolKeys(rowCells, seg, a, w, count, bit);
        m_entries[static_cast<std::size_t>(seg.reason)] += listed;
    }

    // Consecutive keys from region column `offset` on: a cell's slice at a time (max, sum and
    // whether a weight is 0, over eight lanes the compiler vectorises).
    void poolRun(std::size_t rowCells, std::int64_t offset, const float* w, std::int64_t count, ReasonBits bit) {
        const std::int64_t f = m_out.region.factor;
        for (std::int64_t p = 0; p < count;) {
            const std::int64_t col = offset / f, take = std::min(count - p, (col + 1) * f - offset);
            float hi[8] = {}, lo[8], sum[8] = {};
            std::fill(lo, lo + 8, std::numeric_limits<float>::infinity());
            std::int64_t q = 0;
            for (; q + 8 <= take; q += 8)
                for (int l = 0; l < 8; ++l) {
                    const float v = w[p + q + l];
                    hi[l] = v > hi[l] ? v : hi[l];
                    lo[l] = v < lo[l] ? v : lo[l];
                    sum[l] += v;
                }
            for (; q < take; ++q) {
                hi[0] = std::max(hi[0], w[p + q]);
                lo[0] = std::min(lo[0], w[p + q]);
                sum[0] += w[p + q];
            }
            float h = 0.0f, l = std::numeric_limits<float>::infinity();
            double total = 0;
            for (int k = 0; k < 8; ++k) {
                h = std::max(h, hi[k]);
                l = std::min(l, lo[k]);
                total += sum[k];
            }
            const std::size_t cell = rowCells + static_cast<std::size_t>(col);
            m_out.maxWeight[cell] = std::max(m_out.maxWeight[cell], h);
            m_out.sumWeight[cell] += total;
            m_out.reasons[cell] |= bit;
            if (l == 0.0f) m_out.exactZero[cell] = 1;
            p += take;
            offset += take;
        }
    }

    // Keys one by one (strided, gathered, or with excluded keys among them); returns those listed.
    std::int64_t poolKeys(std::size_t rowCells, const DenseSegment& seg, std::int64_t a, const float* w,
                          std::int64_t count, ReasonBits bit) {
        const OverviewRequest& r = m_out.region;
        const std::int64_t f = r.factor;
        const double perCell = 1.0 / static_cast<double>(f);
        const bool skips = seg.skipExcluded && !m_plan.excluded.empty();
        std::int64_t listed = 0;
        for (std::int64_t t = 0; t < count; ++t) {
            const std::int64_t key = keyAt(seg, a + t);
            if (key < r.c0 || key >= r.c1 || (skips && m_plan.excluded[static_cast<std::size_t>(key)])) continue;
            // (key − c0) / f without an integer division a key: the product's floor, corrected
            const std::int64_t offset = key - r.c0;
            auto column = static_cast<std::int64_t>(static_cast<double>(offset) * perCell);
            if (column * f > offset) --column;
            else if ((column + 1) * f <= offset) ++column;
            addKey(m_out, rowCells + static_cast<std::size_t>(column), w[t], bit);
            ++listed;
        }
        return listed;
    }

    const GroupPooling& m_pooling;
    const DensePlan& m_plan;
    const PatternHead& m_head;
    WeightOverview& m_out;
    ReasonEntries& m_entries;
    GroupScratch& m_s;
};

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

bool poolByGroups(const GroupPooling& pooling, const PatternHead& head, WeightOverview& out,
                  const std::function<bool(double)>& keepGoing) {
    const OverviewRequest& r = out.region;
    const std::int64_t f = r.factor;
    std::int64_t blockRows = std::max(kMinBlockRows, ceilDiv(r.r1 - r.r0, kBlocksPerOverview));
    blockRows = ceilDiv(blockRows, f) * f;
    std::vector<GroupScratch> scratch(static_cast<std::size_t>(std::max(kernelThreads(), 1)));
    return addRowsInBlocks(out, blockRows, keepGoing, [&](std::int64_t i0, std::int64_t i1, ReasonEntries& entries, int worker) {
        BlockPooling(pooling, head, out, entries, scratch[static_cast<std::size_t>(worker)]).addRows(i0, i1);
    });
}

}  // namespace attnscope::engine
