// One group of the dense plan (dense_plan_group.h): when every row allows one interval of the
// group's keys, the products run block by block of rows over the union of the block's intervals,
// and each block's P·V follows its softmax while its scores are still in cache; otherwise the
// whole group is one product, masked with -inf. Rows split over several groups are merged by
// log-sum-exp into their running result.

#include "attention/variants/shared/dense_plan_group.h"

#include "base/kernels/small_gemm.h"
#include "base/kernels/softmax_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnscope::engine {
namespace {

// Scores [rows, cols] (leading dimension lds) of query rows q (leading dimension ldq) against
// keys: dot products of rows, or A·B against keys in panels.
void scoreProduct(std::int64_t rows, std::int64_t cols, std::int64_t d, const float* q, std::int64_t ldq,
                  const RowsView& keys, float* s, std::int64_t lds) {
    if (keys.panels)
        smallGemmABPanels(rows, cols, d, q, ldq, keys.p, keys.first, s, lds);
    else
        smallGemmABt(rows, cols, d, q, ldq, keys.p, keys.ld, s, lds);
}

// Sets the scores of row i's allowed keys in [x0, x1) (concatenated key index of group g) to
// -inf where the key is padded, or excluded from a segment that skips excluded keys: their
// weight is then exactly 0. The row's other keys are left as they are. Returns the excluded
// keys it met (not in the pattern, unlike padded keys, which are).
std::int64_t maskKeys(const DensePlan& plan, const DenseGroup& g, std::int64_t i, float* row, std::int64_t x0,
                      std::int64_t x1, const DenseScratch& ws) {
    std::int64_t off = 0, excludedKeys = 0;
    for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
        const DenseSegment& seg = plan.segments[static_cast<std::size_t>(si)];
        const bool excludes = seg.skipExcluded && !plan.excluded.empty();
        if (ws.keyPadding || excludes) {
            std::int64_t lo = 0, hi = 0;
            plan.allowedInSegment(i, si - g.segBegin, seg, lo, hi);
            lo = std::max(lo, x0 - off);
            hi = std::min(hi, x1 - off);
            for (std::int64_t t = lo; t < hi; ++t) {
                const std::int64_t key = seg.gathered ? plan.gatheredKeys[static_cast<std::size_t>(seg.keyStart + t)]
                                                      : seg.keyStart + t * seg.keyStep;
                const bool excluded = excludes && plan.excluded[static_cast<std::size_t>(key)];
                if ((ws.keyPadding && ws.keyPadding[key]) || excluded) row[off + t] = kDenseMinusInf;
                excludedKeys += excluded;
            }
        }
        off += seg.keyCount;
    }
    return excludedKeys;
}

// The allowed keys of one row of group g as the interval [a, b) of the group's concatenated
// keys, when they form one interval (returns false otherwise: several masked segments with gaps).
bool allowedInterval(const DensePlan& plan, const DenseGroup& g, std::int64_t i, std::int64_t& a, std::int64_t& b) {
    a = 0;
    b = 0;
    bool any = false;
    std::int64_t off = 0;
    for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
        const DenseSegment& seg = plan.segments[static_cast<std::size_t>(si)];
        const std::int64_t cnt = seg.keyCount;
        std::int64_t lo = 0, hi = cnt;
        if (seg.masked) {
            plan.range(i, si - g.segBegin, seg, lo, hi);
            lo = std::clamp<std::int64_t>(lo, 0, cnt);
            hi = std::clamp<std::int64_t>(hi, lo, cnt);
        }
        if (hi > lo) {
            if (!any) {
                a = off + lo;
                b = off + hi;
                any = true;
            } else if (b == off + lo) {
                b = off + hi;
            } else {
                return false;
            }
        }
        off += cnt;
    }
    return true;
}

// Row blocks of the register-tiled products: Q·Kᵀ runs 3 query rows at a time against keys in
// rows (6 against keys in panels) and P·V 6, so a group whose rows each allow one interval of
// keys computes, per block, only the union of its rows' intervals (a band's rows shift by one key
// each: 131-134 scores per row for 129 allowed, where the whole group's union cost rowCount - 1
// extra per row).
constexpr std::int64_t kScoreRowBlock = 3;
constexpr std::int64_t kValueRowBlock = 6;
// Keys per step of the dot-product Q·Kᵀ kernel.
constexpr std::int64_t kScoreKeyBlock = 4;
// Rows of the next residue prefetched per block of rows (see ResidueRows::prefetchSome).
constexpr std::int64_t kPrefetchRowsPerBlock = 8;

// Calls f(rows, columnOffset, count) for the parts of the group's key (or value) rows: each
// segment where `source` locates it when `perSegment` or the group has one segment, else all
// segments gathered into one matrix (in `gather`).
template <class F>
void forEachKeyPart(const DensePlan& plan, const DenseGroup& g, std::int64_t keys, const RowSource& source,
                    std::int64_t d, bool perSegment, float* gather, F&& f) {
    if (perSegment || g.segEnd - g.segBegin == 1) {
        std::int64_t off = 0;
        for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
            const DenseSegment& seg = plan.segments[static_cast<std::size_t>(si)];
            f(source.locate(seg, d), off, seg.keyCount);
            off += seg.keyCount;
        }
        return;
    }
    f(RowsView{gatherRows(source.base, d, plan, g, gather), d, false}, std::int64_t{0}, keys);
}

// The union [x0, x1) of the allowed intervals of rows [r0, r1) (x0 >= x1 when all are empty).
void intervalUnion(const std::int64_t* lo, const std::int64_t* hi, std::int64_t r0, std::int64_t r1, std::int64_t keys,
                   std::int64_t& x0, std::int64_t& x1) {
    x0 = keys;
    x1 = 0;
    for (std::int64_t r = r0; r < r1; ++r)
        if (lo[r] < hi[r]) {
            x0 = std::min(x0, lo[r]);
            x1 = std::max(x1, hi[r]);
        }
}

class DenseGroupRun {
public:
    DenseGroupRun(const DensePlan& plan, const DenseGroup& g, const float* qp, float* op, std::int64_t d, float scale,
                  bool merge, DenseScratch& ws)
        : m_plan(plan), m_g(g), m_qp(qp), m_op(op), m_d(d), m_scale(scale), m_merge(merge), m_ws(ws) {
        m_rows = g.rowCount;
        for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) m_keys += plan.segments[static_cast<std::size_t>(si)].keyCount;
    }

    bool empty() const { return m_rows <= 0 || m_keys <= 0; }

    void run(std::uint8_t* rowStatus) {
        prepare();
        if (m_intervals) intervalBlocks();
        else maskedGroup();
        finishRows(rowStatus);
    }

private:
    // The group's scratch, where its keys are read from, and whether its rows each allow one
    // interval of its keys (lo, hi).
    void prepare() {
        m_ws.residueK.prepare(m_plan, m_g);
        m_ws.residueV.prepare(m_plan, m_g);
        m_sp = m_ws.scores + kScorePad;
        m_lds = m_keys + kScorePad;
        // Several segments: each segment's keys are read in place (with their stride) into its own
        // columns of the scores, and P·V adds the segments' values in turn, when the
        // register-tiled products serve d; otherwise the segments are gathered into one matrix.
        m_tiled = smallGemmInPlace(m_d);
        m_perSegment = m_g.segEnd - m_g.segBegin > 1 && m_tiled;
        m_gatherK = m_ws.gatherK;
        m_gatherV = m_ws.gatherV;
        m_partMax = m_merge ? m_ws.part + m_rows * m_d : nullptr;
        m_partSum = m_merge ? m_partMax + m_rows : nullptr;
        m_pp = m_merge ? m_ws.part : nullptr;
        m_lo = m_ws.rowLo.data();
        m_hi = m_ws.rowHi.data();
        // A group that is the first to reach each of its rows (sparse_strided's band groups)
        // writes its partial output straight into the output rows: nothing to merge yet.
        m_direct = m_merge;
        for (std::int64_t r = 0; r < m_rows && m_direct; ++r) m_direct = m_ws.accSum[row(r)] == 0.0f;
        m_intoOutput = !m_merge || m_direct;
        m_intervals = true;
        for (std::int64_t r = 0; r < m_rows && m_intervals; ++r) m_intervals = allowedInterval(m_plan, m_g, row(r), m_lo[r], m_hi[r]);
    }

    std::int64_t row(std::int64_t r) const { return m_g.rowStart + r * m_g.rowStep; }

    // C rows [r0, r1) of P·V over the columns [x0, x1): into the partial output or the output, or
    // added to the output (addToOutput).
    void weightedValues(std::int64_t r0, std::int64_t r1, std::int64_t x0, std::int64_t x1, bool addToOutput) {
        const bool toOutput = m_intoOutput || addToOutput;
        float* out = toOutput ? m_op + row(r0) * m_d : m_pp + r0 * m_d;
        const std::int64_t ldo = toOutput ? m_g.rowStep * m_d : m_d;
        bool first = !addToOutput;
        forEachKeyPart(m_plan, m_g, m_keys, m_ws.valueSource, m_d, m_perSegment, m_gatherV,
                       [&](const RowsView& values, std::int64_t off, std::int64_t cnt) {
                           const std::int64_t c0 = std::max(x0, off), c1 = std::min(x1, off + cnt);
                           if (c0 >= c1) return;
                           const RowsView v = values.from(c0 - off);
                           (first ? smallGemmAB : smallGemmABAdd)(r1 - r0, m_d, c1 - c0, m_sp + r0 * m_lds + c0, m_lds, v.p,
                                                                  v.ld, out, ldo);
                           first = false;
                       });
        if (first && !addToOutput)  // no key in the block: its rows are empty
            for (std::int64_t r = r0; r < r1; ++r) std::memset(out + (r - r0) * ldo, 0, static_cast<std::size_t>(m_d) * sizeof(float));
    }

    // Marks row r (of the group) as having no allowed key.
    void emptyRow(std::int64_t r) {
        if (m_merge) {
            m_partMax[r] = kDenseMinusInf;
            m_partSum[r] = 0.0f;
        } else {
            m_ws.groupStatus[static_cast<std::size_t>(r)] = 1;
            m_ws.rowShift[row(r)] = kDenseMinusInf;
            m_ws.rowSum[row(r)] = 0.0f;
        }
    }

    // Rows that each allow one interval: per block of rows, scores over the block's union, the
    // rows' softmax and P·V.
    void intervalBlocks() {
        // Rows that all allow the same keys gain nothing from blocks: one product each way.
        bool sameKeys = true;
        for (std::int64_t r = 1; r < m_rows && sameKeys; ++r) sameKeys = m_lo[r] == m_lo[0] && m_hi[r] == m_hi[0];
        const bool blocks = m_tiled && !sameKeys;
        // Keys in panels go through the A·B kernel 6 rows at a time, others through dot products
        // 3 rows at a time.
        bool anyPanels = false;
        forEachKeyPart(m_plan, m_g, m_keys, m_ws.keySource, m_d, /*perSegment=*/true, nullptr,
                       [&](const RowsView& k, std::int64_t, std::int64_t) { anyPanels = anyPanels || k.panels; });
        const std::int64_t scoreBlock = !blocks ? m_rows : anyPanels ? kValueRowBlock : kScoreRowBlock;
        const std::int64_t valueBlock = blocks ? kValueRowBlock : m_rows;
        for (std::int64_t r0 = 0; r0 < m_rows; r0 += valueBlock) {
            const std::int64_t r1 = std::min(m_rows, r0 + valueBlock);
            std::int64_t x0 = 0, x1 = 0;  // the block's union (P·V's columns)
            intervalUnion(m_lo, m_hi, r0, r1, m_keys, x0, x1);
            for (std::int64_t s0 = r0; s0 < r1; s0 += scoreBlock) blockScores(s0, std::min(r1, s0 + scoreBlock), r0, r1, x0, x1, anyPanels);
            const bool addToOutput = blockSoftmax(r0, r1, x0, x1);
            m_ws.residueK.prefetchSome(kPrefetchRowsPerBlock);
            m_ws.residueV.prefetchSome(kPrefetchRowsPerBlock);
            if (x0 < x1)
                weightedValues(r0, r1, x0, x1, addToOutput);
            else if (m_intoOutput)
                weightedValues(r0, r1, 0, 0, false);  // zero rows
            if (addToOutput)
                for (std::int64_t r = r0; r < r1; ++r) {
                    if (m_partSum[r] == 0.0f) continue;
                    m_ws.accSum[row(r)] += m_partSum[r];  // the shift was the earlier parts' max
                    m_partSum[r] = 0.0f;                   // nothing left to merge
                }
        }
    }

    // Scores of rows [s0, s1) over their union within the block's [bx0, bx1).
    void blockScores(std::int64_t s0, std::int64_t s1, std::int64_t r0, std::int64_t r1, std::int64_t bx0, std::int64_t bx1,
                     bool anyPanels) {
        std::int64_t x0 = bx0, x1 = bx1;
        if (s0 != r0 || s1 != r1) intervalUnion(m_lo, m_hi, s0, s1, m_keys, x0, x1);
        if (x0 >= x1) return;
        if (!anyPanels) {
            const std::int64_t width = (x1 - x0 + kScoreKeyBlock - 1) / kScoreKeyBlock * kScoreKeyBlock;
            if (x0 + width <= m_keys) x1 = x0 + width;
            else x0 = std::max<std::int64_t>(0, x1 - width);
        }
        const float* q0 = m_qp + row(s0) * m_d;
        std::int64_t computed = 0;
        forEachKeyPart(m_plan, m_g, m_keys, m_ws.keySource, m_d, m_perSegment, m_gatherK,
                       [&](const RowsView& keyRows, std::int64_t off, std::int64_t cnt) {
                           std::int64_t c0 = std::max(x0, off), c1 = std::min(x1, off + cnt);
                           if (c0 >= c1) return;
                           if (keyRows.panels) {
                               // whole panels where the extra columns (up to 7 each side) fall in
                               // this segment or in the rows' pads (kScorePad)
                               const std::int64_t lane0 = (keyRows.first + (c0 - off)) % 8;
                               if (lane0 != 0 && (c0 - lane0 >= off || off == 0)) c0 -= lane0;
                               const std::int64_t end = c0 + (c1 - c0 + 7) / 8 * 8;
                               // Past the group's last key the extra columns land in the pads, but
                               // their keys must still be in the panel of the last key read: when
                               // c0 could not move back to a panel's start, `end` can reach into
                               // a panel after the head's last one (found by AddressSanitizer).
                               const std::int64_t lastPanel = (keyRows.first + (c1 - off) - 1) / 8;
                               const bool inLastPanel = (keyRows.first + (end - off) - 1) / 8 == lastPanel;
                               if (end <= off + cnt || (off + cnt == m_keys && inLastPanel)) c1 = end;
                           }
                           scoreProduct(s1 - s0, c1 - c0, m_d, q0, m_g.rowStep * m_d, keyRows.from(c0 - off),
                                        m_sp + s0 * m_lds + c0, m_lds);
                           computed += c1 - c0;
                       });
        m_ws.entries += (s1 - s0) * computed;
    }

    // The block's rows: their columns outside their interval become exact zeros, their keys are
    // masked and exponentiated. Returns whether the block's P·V adds straight into the output: a
    // later part of split rows does when every row's exp could take the earlier parts' max as its
    // shift (expRowAgainst), else it is merged.
    bool blockSoftmax(std::int64_t r0, std::int64_t r1, std::int64_t x0, std::int64_t x1) {
        bool addToOutput = m_merge && !m_direct;
        for (std::int64_t r = r0; r < r1; ++r) {
            float* scores = m_sp + r * m_lds;
            const std::int64_t a = m_lo[r], b = m_hi[r];
            if (a >= b) {
                std::fill(scores + x0, scores + std::max(x0, x1), 0.0f);
                emptyRow(r);
                continue;
            }
            std::fill(scores + x0, scores + a, 0.0f);
            std::fill(scores + b, scores + x1, 0.0f);
            m_ws.allowed += b - a;
            if (m_ws.masking) m_ws.allowed -= maskKeys(m_plan, m_g, row(r), scores, a, b, m_ws);
            const std::int64_t i = row(r);
            if (m_merge && !m_direct) {
                const bool earlier = m_ws.accSum[i] != 0.0f;
                m_partSum[r] = expRowAgainst(scores + a, b - a, m_scale, earlier ? m_ws.accMax[i] : kDenseMinusInf, m_partMax + r);
                // (a row without an earlier part has no output yet to add to: merged)
                addToOutput = addToOutput && earlier && m_partMax[r] == m_ws.accMax[i];
            } else if (m_merge) {
                expRowsInPlace(scores + a, 1, b - a, b - a, m_scale, m_partMax + r, m_partSum + r);
            } else {
                softmaxRowsInPlace(scores + a, 1, b - a, b - a, m_scale, m_ws.groupStatus.data() + r, m_ws.rowShift + i,
                                   m_ws.rowSum + i);
            }
        }
        return addToOutput;
    }

    // Some row's allowed keys have gaps: one product over the whole group, every disallowed score
    // masked with -inf, softmax over the whole row.
    void maskedGroup() {
        forEachKeyPart(m_plan, m_g, m_keys, m_ws.keySource, m_d, m_perSegment, m_gatherK,
                       [&](const RowsView& keyRows, std::int64_t off, std::int64_t cnt) {
                           scoreProduct(m_rows, cnt, m_d, m_qp + m_g.rowStart * m_d, m_g.rowStep * m_d, keyRows, m_sp + off, m_lds);
                       });
        m_ws.entries += m_rows * m_keys;
        for (std::int64_t r = 0; r < m_rows; ++r) {
            float* scores = m_sp + r * m_lds;
            const std::int64_t i = row(r);
            std::int64_t off = 0, rowAllowed = m_keys;
            for (std::int64_t si = m_g.segBegin; si < m_g.segEnd; ++si) {
                const DenseSegment& seg = m_plan.segments[static_cast<std::size_t>(si)];
                const std::int64_t cnt = seg.keyCount;
                if (seg.masked) {
                    std::int64_t a = 0, b = cnt;
                    m_plan.range(i, si - m_g.segBegin, seg, a, b);
                    a = std::clamp<std::int64_t>(a, 0, cnt);
                    b = std::clamp<std::int64_t>(b, a, cnt);
                    std::fill(scores + off, scores + off + a, kDenseMinusInf);
                    std::fill(scores + off + b, scores + off + cnt, kDenseMinusInf);
                    rowAllowed -= cnt - (b - a);
                }
                off += cnt;
            }
            if (m_ws.masking) rowAllowed -= maskKeys(m_plan, m_g, i, scores, 0, m_keys, m_ws);
            m_ws.allowed += rowAllowed;
            if (m_merge)
                expRowsInPlace(scores, 1, m_keys, m_keys, m_scale, m_partMax + r, m_partSum + r);
            else
                softmaxRowsInPlace(scores, 1, m_keys, m_keys, m_scale, m_ws.groupStatus.data() + r, m_ws.rowShift + i,
                                   m_ws.rowSum + i);
        }
        weightedValues(0, m_rows, 0, m_keys, false);
    }

    // Whole rows: their status. A first part: the rows' running max and sum. A later part:
    // merged by log-sum-exp into the running rows (the rescaling factors of the whole group at
    // once, through the vectorised exp).
    void finishRows(std::uint8_t* rowStatus) {
        if (!m_merge) {
            for (std::int64_t r = 0; r < m_rows; ++r)
                if (m_ws.groupStatus[static_cast<std::size_t>(r)]) {
                    m_ws.groupStatus[static_cast<std::size_t>(r)] = 0;
                    rowStatus[row(r)] = 1;
                    ++m_ws.emptyRows;
                }
            return;
        }
        if (m_direct) {
            for (std::int64_t r = 0; r < m_rows; ++r) {
                m_ws.accMax[row(r)] = m_partMax[r];
                m_ws.accSum[row(r)] = m_partSum[r];
            }
            return;
        }
        float* keepOld = m_ws.mergeScale.data();
        float* keepNew = keepOld + m_rows;
        for (std::int64_t r = 0; r < m_rows; ++r) {
            const std::int64_t i = row(r);
            const float mx = m_partSum[r] == 0.0f ? m_ws.accMax[i] : std::max(m_ws.accMax[i], m_partMax[r]);
            keepOld[r] = m_ws.accSum[i] == 0.0f ? 0.0f : (m_ws.accMax[i] - mx) * m_scale;
            keepNew[r] = m_partSum[r] == 0.0f ? 0.0f : (m_partMax[r] - mx) * m_scale;
            m_partMax[r] = mx;
        }
        expNonPositiveInPlace(keepOld, 2 * m_rows);
        for (std::int64_t r = 0; r < m_rows; ++r) {
            const float sum = m_partSum[r];
            if (sum == 0.0f) continue;
            const std::int64_t i = row(r);
            float* o = m_op + i * m_d;
            const float* p = m_pp + r * m_d;
            if (m_ws.accSum[i] == 0.0f) {
                std::memcpy(o, p, static_cast<std::size_t>(m_d) * sizeof(float));
                m_ws.accMax[i] = m_partMax[r];
                m_ws.accSum[i] = sum;
                continue;
            }
            const float ea = keepOld[r], eb = keepNew[r];
            for (std::int64_t c = 0; c < m_d; ++c) o[c] = o[c] * ea + p[c] * eb;
            m_ws.accSum[i] = m_ws.accSum[i] * ea + sum * eb;
            m_ws.accMax[i] = m_partMax[r];
        }
    }

    const DensePlan& m_plan;
    const DenseGroup& m_g;
    const float* m_qp;
    float* m_op;
    std::int64_t m_d;
    float m_scale;
    bool m_merge;
    DenseScratch& m_ws;
    std::int64_t m_rows = 0, m_keys = 0, m_lds = 0;
    float* m_sp = nullptr;
    bool m_tiled = false, m_perSegment = false, m_direct = false, m_intoOutput = false, m_intervals = false;
    float *m_gatherK = nullptr, *m_gatherV = nullptr, *m_partMax = nullptr, *m_partSum = nullptr, *m_pp = nullptr;
    std::int64_t *m_lo = nullptr, *m_hi = nullptr;
};

}  // namespace

void runDenseGroup(const DensePlan& plan, const DenseGroup& g, const float* qp, const float*, const float*, float* op,
                   std::int64_t d, float scale, GroupRows rowsMode, DenseScratch& ws, std::uint8_t* rowStatus) {
    DenseGroupRun group(plan, g, qp, op, d, scale, rowsMode == GroupRows::Part, ws);
    if (!group.empty()) group.run(rowStatus);
}

}  // namespace attnscope::engine
