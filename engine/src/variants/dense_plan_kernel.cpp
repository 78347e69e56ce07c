// The pattern variants' kernel (see DensePlan in pattern/block_pattern.h): groups of query rows
// against runs of keys, computed on each block of rows' allowed keys only.

#include "variants/dense_plan_kernel.h"

#include "kernels/blas_gemm.h"
#include "kernels/finite_scan.h"
#include "kernels/small_gemm.h"
#include "kernels/softmax_kernel.h"
#include "pattern/block_pattern.h"
#include "variants/dense_plan_rows.h"
#include "variants/strided_keys_pass.h"

#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnscope::engine {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// Scores [rows, cols] (leading dimension lds) of query rows q (leading dimension ldq) against
// keys: dot products of rows, or A·B against keys in panels.
void scoreProduct(std::int64_t rows, std::int64_t cols, std::int64_t d, const float* q, std::int64_t ldq,
                  const RowsView& keys, float* s, std::int64_t lds) {
    if (keys.panels)
        smallGemmABPanels(rows, cols, d, q, ldq, keys.p, keys.first, s, lds);
    else
        smallGemmABt(rows, cols, d, q, ldq, keys.p, keys.ld, s, lds);
}

// Scratch of one worker thread of the dense-plan kernel.
struct DenseScratch {
    at::Tensor scores, gatherK, gatherV, part, residue, keyPanels, gathered, strided;
    std::int64_t preparedHead = -1;    ///< the head whose copies the scratch holds
    ResidueRows residueK, residueV;    ///< one residue's keys and values (large-step segments)
    RowSource keySource, valueSource;  ///< this item's head
    float* accMax = nullptr;  // [n] running max / sum of split rows (merge plans)
    float* accSum = nullptr;
    std::vector<std::uint8_t> groupStatus;
    std::vector<std::int64_t> rowLo, rowHi;  ///< each row's allowed interval of the group's keys
    std::vector<float> mergeScale;           ///< [2 * rows] rescaling factors of a merge
    const std::uint8_t* keyPadding = nullptr;  ///< [m] 1 = padded key; null = none
    bool masking = false;  ///< padded or excluded keys exist in this head: rows need maskKeys()
    float* rowShift = nullptr;  ///< this head's [n] row statistics (single-cover plans fill them per row):
    float* rowSum = nullptr;    ///< every weight is exp(scale·s − shift) / sum
    std::int64_t entries = 0, allowed = 0, emptyRows = 0;
};

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
                if ((ws.keyPadding && ws.keyPadding[key]) || excluded) row[off + t] = kMinusInf;
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
// Spare floats before the scores and after each score row, for whole panels of keys (8).
constexpr std::int64_t kScorePad = 8;

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

// One group of the dense plan on one worker: scores = Q_rows K_keys^T, mask + softmax, output =
// P V_keys (or a partial output merged by log-sum-exp into the rows' running result when rows are
// split). When every row allows one interval of the group's keys, the products run block by
// block of rows over the union of the block's intervals, and each block's P·V follows its softmax
// while its scores are still in cache; otherwise the whole group is one product, masked with -inf.
// qp, kp, vp: this head's [n, d] / [m, d] rows; op: this head's output rows.
void runDenseGroup(const DensePlan& plan, const DenseGroup& g, const float* qp, const float* kp, const float* vp,
                   float* op, std::int64_t d, float scale, bool merge, DenseScratch& ws, std::uint8_t* rowStatus) {
    const std::int64_t rows = g.rowCount;
    std::int64_t keys = 0;
    for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) keys += plan.segments[static_cast<std::size_t>(si)].keyCount;
    if (rows <= 0 || keys <= 0) return;
    ws.residueK.prepare(plan, g);
    ws.residueV.prepare(plan, g);
    float* sp = ws.scores.data_ptr<float>() + kScorePad;
    const std::int64_t lds = keys + kScorePad;
    // Several segments: each segment's keys are read in place (with their stride) into its own
    // columns of the scores, and P·V adds the segments' values in turn, when the register-tiled
    // products serve d; otherwise the segments are gathered into one matrix first.
    const bool tiled = smallGemmInPlace(d);
    const bool perSegment = g.segEnd - g.segBegin > 1 && tiled;
    float* gatherK = ws.gatherK.defined() ? ws.gatherK.data_ptr<float>() : nullptr;
    float* gatherV = ws.gatherV.defined() ? ws.gatherV.data_ptr<float>() : nullptr;
    float* partMax = merge ? ws.part.data_ptr<float>() + rows * d : nullptr;
    float* partSum = merge ? partMax + rows : nullptr;
    float* pp = merge ? ws.part.data_ptr<float>() : nullptr;
    std::int64_t* lo = ws.rowLo.data();
    std::int64_t* hi = ws.rowHi.data();
    // A group that is the first to reach each of its rows (sparse_strided's band groups) writes
    // its partial output straight into the output rows: nothing to merge yet.
    bool direct = merge;
    for (std::int64_t r = 0; r < rows && direct; ++r) direct = ws.accSum[g.rowStart + r * g.rowStep] == 0.0f;
    const bool intoOutput = !merge || direct;
    bool intervals = true;
    for (std::int64_t r = 0; r < rows && intervals; ++r)
        intervals = allowedInterval(plan, g, g.rowStart + r * g.rowStep, lo[r], hi[r]);

    // C rows [r0, r1) of P·V over the columns [x0, x1): into the partial output or the output, or
    // added to the output (addToOutput).
    const auto weightedValues = [&](std::int64_t r0, std::int64_t r1, std::int64_t x0, std::int64_t x1,
                                    bool addToOutput) {
        const bool toOutput = intoOutput || addToOutput;
        float* out = toOutput ? op + (g.rowStart + r0 * g.rowStep) * d : pp + r0 * d;
        const std::int64_t ldo = toOutput ? g.rowStep * d : d;
        bool first = !addToOutput;
        forEachKeyPart(plan, g, keys, ws.valueSource, d, perSegment, gatherV,
                       [&](const RowsView& values, std::int64_t off, std::int64_t cnt) {
                           const std::int64_t c0 = std::max(x0, off), c1 = std::min(x1, off + cnt);
                           if (c0 >= c1) return;
                           const RowsView v = values.from(c0 - off);
                           (first ? smallGemmAB : smallGemmABAdd)(r1 - r0, d, c1 - c0, sp + r0 * lds + c0, lds, v.p,
                                                                  v.ld, out, ldo);
                           first = false;
                       });
        if (first && !addToOutput)  // no key in the block: its rows are empty
            for (std::int64_t r = r0; r < r1; ++r)
                std::memset(out + (r - r0) * ldo, 0, static_cast<std::size_t>(d) * sizeof(float));
    };
    // Marks row r (of the group) as having no allowed key.
    const auto emptyRow = [&](std::int64_t r) {
        if (merge) {
            partMax[r] = kMinusInf;
            partSum[r] = 0.0f;
        } else {
            ws.groupStatus[static_cast<std::size_t>(r)] = 1;
            ws.rowShift[g.rowStart + r * g.rowStep] = kMinusInf;
            ws.rowSum[g.rowStart + r * g.rowStep] = 0.0f;
        }
    };

    if (intervals) {
        // Rows that all allow the same keys gain nothing from blocks: one product each way.
        bool sameKeys = true;
        for (std::int64_t r = 1; r < rows && sameKeys; ++r) sameKeys = lo[r] == lo[0] && hi[r] == hi[0];
        const bool blocks = tiled && !sameKeys;
        // Keys in panels go through the A·B kernel 6 rows at a time, others through dot products
        // 3 rows at a time.
        bool anyPanels = false;
        forEachKeyPart(plan, g, keys, ws.keySource, d, /*perSegment=*/true, nullptr,
                       [&](const RowsView& k, std::int64_t, std::int64_t) { anyPanels = anyPanels || k.panels; });
        const std::int64_t scoreBlock = !blocks ? rows : anyPanels ? kValueRowBlock : kScoreRowBlock;
        const std::int64_t valueBlock = blocks ? kValueRowBlock : rows;
        // Each block of rows: its scores, softmax and P·V in turn, while its scores are in cache.
        for (std::int64_t r0 = 0; r0 < rows; r0 += valueBlock) {
            const std::int64_t r1 = std::min(rows, r0 + valueBlock);
            std::int64_t bx0 = 0, bx1 = 0;  // the block's union (P·V's columns)
            intervalUnion(lo, hi, r0, r1, keys, bx0, bx1);
            for (std::int64_t s0 = r0; s0 < r1; s0 += scoreBlock) {
                const std::int64_t s1 = std::min(r1, s0 + scoreBlock);
                std::int64_t x0 = bx0, x1 = bx1;
                if (s0 != r0 || s1 != r1) intervalUnion(lo, hi, s0, s1, keys, x0, x1);
                if (x0 >= x1) continue;
                if (!anyPanels) {
                    const std::int64_t width = (x1 - x0 + kScoreKeyBlock - 1) / kScoreKeyBlock * kScoreKeyBlock;
                    if (x0 + width <= keys)
                        x1 = x0 + width;
                    else
                        x0 = std::max<std::int64_t>(0, x1 - width);
                }
                const float* q0 = qp + (g.rowStart + s0 * g.rowStep) * d;
                std::int64_t computed = 0;
                forEachKeyPart(plan, g, keys, ws.keySource, d, perSegment, gatherK,
                               [&](const RowsView& keyRows, std::int64_t off, std::int64_t cnt) {
                                   std::int64_t c0 = std::max(x0, off), c1 = std::min(x1, off + cnt);
                                   if (c0 >= c1) return;
                                   if (keyRows.panels) {
                                       // whole panels where the extra columns (up to 7 each side)
                                       // fall in this segment or in the rows' pads (kScorePad)
                                       const std::int64_t lane0 = (keyRows.first + (c0 - off)) % 8;
                                       if (lane0 != 0 && (c0 - lane0 >= off || off == 0)) c0 -= lane0;
                                       const std::int64_t end = c0 + (c1 - c0 + 7) / 8 * 8;
                                       if (end <= off + cnt || off + cnt == keys) c1 = end;
                                   }
                                   scoreProduct(s1 - s0, c1 - c0, d, q0, g.rowStep * d, keyRows.from(c0 - off),
                                                sp + s0 * lds + c0, lds);
                                   computed += c1 - c0;
                               });
                ws.entries += (s1 - s0) * computed;
            }
            const std::int64_t x0 = bx0, x1 = bx1;
            // A later part of split rows adds straight into the output when every row's exp
            // could take the earlier parts' max as its shift (see expRowAgainst), else it is merged.
            bool addToOutput = merge && !direct;
            for (std::int64_t r = r0; r < r1; ++r) {
                float* row = sp + r * lds;
                const std::int64_t a = lo[r], b = hi[r];
                if (a >= b) {
                    std::fill(row + x0, row + std::max(x0, x1), 0.0f);
                    emptyRow(r);
                    continue;
                }
                // the block's other columns (a few at each end) become exact zeros for this row
                std::fill(row + x0, row + a, 0.0f);
                std::fill(row + b, row + x1, 0.0f);
                ws.allowed += b - a;
                if (ws.masking) ws.allowed -= maskKeys(plan, g, g.rowStart + r * g.rowStep, row, a, b, ws);
                if (merge && !direct) {
                    const std::int64_t i = g.rowStart + r * g.rowStep;
                    const bool earlier = ws.accSum[i] != 0.0f;
                    partSum[r] = expRowAgainst(row + a, b - a, scale, earlier ? ws.accMax[i] : kMinusInf, partMax + r);
                    // (a row without an earlier part has no output yet to add to: merged)
                    addToOutput = addToOutput && earlier && partMax[r] == ws.accMax[i];
                } else if (merge) {
                    expRowsInPlace(row + a, 1, b - a, b - a, scale, partMax + r, partSum + r);
                } else {
                    softmaxRowsInPlace(row + a, 1, b - a, b - a, scale, ws.groupStatus.data() + r,
                                       ws.rowShift + g.rowStart + r * g.rowStep, ws.rowSum + g.rowStart + r * g.rowStep);
                }
            }
            ws.residueK.prefetchSome(kPrefetchRowsPerBlock);
            ws.residueV.prefetchSome(kPrefetchRowsPerBlock);
            if (x0 < x1)
                weightedValues(r0, r1, x0, x1, addToOutput);
            else if (intoOutput)
                weightedValues(r0, r1, 0, 0, false);  // zero rows
            if (addToOutput)
                for (std::int64_t r = r0; r < r1; ++r) {
                    if (partSum[r] == 0.0f) continue;
                    const std::int64_t i = g.rowStart + r * g.rowStep;
                    ws.accSum[i] += partSum[r];  // the shift was the earlier parts' max
                    partSum[r] = 0.0f;           // nothing left to merge
                }
        }
    } else {
        // Some row's allowed keys have gaps: one product over the whole group, every disallowed
        // score masked with -inf, softmax over the whole row.
        forEachKeyPart(plan, g, keys, ws.keySource, d, perSegment, gatherK,
                       [&](const RowsView& keyRows, std::int64_t off, std::int64_t cnt) {
                           scoreProduct(rows, cnt, d, qp + g.rowStart * d, g.rowStep * d, keyRows, sp + off, lds);
                       });
        ws.entries += rows * keys;
        for (std::int64_t r = 0; r < rows; ++r) {
            float* row = sp + r * lds;
            const std::int64_t i = g.rowStart + r * g.rowStep;
            std::int64_t off = 0, rowAllowed = keys;
            for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
                const DenseSegment& seg = plan.segments[static_cast<std::size_t>(si)];
                const std::int64_t cnt = seg.keyCount;
                if (seg.masked) {
                    std::int64_t a = 0, b = cnt;
                    plan.range(i, si - g.segBegin, seg, a, b);
                    a = std::clamp<std::int64_t>(a, 0, cnt);
                    b = std::clamp<std::int64_t>(b, a, cnt);
                    std::fill(row + off, row + off + a, kMinusInf);
                    std::fill(row + off + b, row + off + cnt, kMinusInf);
                    rowAllowed -= cnt - (b - a);
                }
                off += cnt;
            }
            if (ws.masking) rowAllowed -= maskKeys(plan, g, i, row, 0, keys, ws);
            ws.allowed += rowAllowed;
            if (merge)
                expRowsInPlace(row, 1, keys, keys, scale, partMax + r, partSum + r);
            else
                softmaxRowsInPlace(row, 1, keys, keys, scale, ws.groupStatus.data() + r, ws.rowShift + i, ws.rowSum + i);
        }
        weightedValues(0, rows, 0, keys, false);
    }

    if (!merge) {
        for (std::int64_t r = 0; r < rows; ++r)
            if (ws.groupStatus[static_cast<std::size_t>(r)]) {
                ws.groupStatus[static_cast<std::size_t>(r)] = 0;
                rowStatus[g.rowStart + r * g.rowStep] = 1;
                ++ws.emptyRows;
            }
        return;
    }
    if (direct) {
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t i = g.rowStart + r * g.rowStep;
            ws.accMax[i] = partMax[r];
            ws.accSum[i] = partSum[r];
        }
        return;
    }
    // Log-sum-exp merge of the partial rows into the running ones: the rescaling factors of a
    // whole group at once, through the vectorised exp.
    float* keepOld = ws.mergeScale.data();
    float* keepNew = keepOld + rows;
    for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t i = g.rowStart + r * g.rowStep;
        const float mx = partSum[r] == 0.0f ? ws.accMax[i] : std::max(ws.accMax[i], partMax[r]);
        keepOld[r] = ws.accSum[i] == 0.0f ? 0.0f : (ws.accMax[i] - mx) * scale;
        keepNew[r] = partSum[r] == 0.0f ? 0.0f : (partMax[r] - mx) * scale;
        partMax[r] = mx;
    }
    expNonPositiveInPlace(keepOld, 2 * rows);
    for (std::int64_t r = 0; r < rows; ++r) {
        const float sum = partSum[r];
        if (sum == 0.0f) continue;
        const std::int64_t i = g.rowStart + r * g.rowStep;
        float* o = op + i * d;
        const float* p = pp + r * d;
        if (ws.accSum[i] == 0.0f) {
            std::memcpy(o, p, static_cast<std::size_t>(d) * sizeof(float));
            ws.accMax[i] = partMax[r];
            ws.accSum[i] = sum;
            continue;
        }
        const float ea = keepOld[r], eb = keepNew[r];
        for (std::int64_t c = 0; c < d; ++c) o[c] = o[c] * ea + p[c] * eb;
        ws.accSum[i] = ws.accSum[i] * ea + sum * eb;
        ws.accMax[i] = partMax[r];
    }
}

}  // namespace

// The pattern kernel (see DensePlan). Work is split over LibTorch's intra-op threads: by group
// when every row lies in one group (groups then write disjoint output rows), else by head (the
// split rows of a head are merged by one thread). Each thread runs the register-tiled products
// (or single-threaded SGEMMs) on its own pooled scratch and per-head copies.
void runPatternKernel(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const PatternKernelInput& input,
                      RunContext& ctx, AttentionResult& result) {
    const BlockPattern& pattern = *input.pattern;
    const std::int64_t heads = q.size(0), n = q.size(1), d = q.size(2);
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    // With padded keys the strided keys pass (which cannot mask) gives way to explicit groups.
    const bool keyPadding = !input.keyPadding.empty() &&
                            std::find(input.keyPadding.begin(), input.keyPadding.end(), 1) != input.keyPadding.end();
    std::vector<const DensePlan*> plans(static_cast<std::size_t>(heads));
    std::vector<DensePlan> expanded;
    expanded.reserve(static_cast<std::size_t>(heads));
    for (std::int64_t h = 0; h < heads; ++h) {
        const DensePlan& plan = pattern.head(h);
        if (keyPadding && plan.strided.step > 0) {
            expanded.push_back(expandStridedRule(plan, n, pattern.m));
            plans[static_cast<std::size_t>(h)] = &expanded.back();
        } else {
            plans[static_cast<std::size_t>(h)] = &plan;
        }
    }

    std::int64_t maxRows = 1, maxKeys = 1;
    bool gathers = false, merge = false;
    struct Item {
        std::int64_t head, group0, group1;
    };
    std::vector<Item> items;
    for (std::int64_t h = 0; h < heads; ++h) {
        const DensePlan& plan = *plans[static_cast<std::size_t>(h)];
        merge = merge || !plan.singleCover || plan.strided.step > 0;
        for (const auto& g : plan.groups) {
            std::int64_t keys = 0;
            for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) keys += plan.segments[static_cast<std::size_t>(si)].keyCount;
            maxRows = std::max(maxRows, g.rowCount);
            maxKeys = std::max(maxKeys, keys);
            gathers = gathers || (g.segEnd - g.segBegin > 1 && !smallGemmInPlace(d));
        }
    }
    for (std::int64_t h = 0; h < heads; ++h) {
        const auto groups = static_cast<std::int64_t>(plans[static_cast<std::size_t>(h)]->groups.size());
        if (merge)
            items.push_back({h, 0, groups});
        else
            for (std::int64_t gi = 0; gi < groups; ++gi) items.push_back({h, gi, gi + 1});
    }

    // Each worker copies, once per head it works on: the keys of unit-step segments in panels of 8
    // for the A·B kernel (on band tiles, 6 rows x 144 keys, d = 64, it measured 84-94 GFLOP/s
    // against 57-65 for dot products of key rows); the plan's gathered keys and values; and, one
    // residue at a time, the rows of a large-step segment (see ResidueRows). Keys go in panels
    // whenever the register-tiled products serve d.
    const bool tiled = smallGemmInPlace(d);
    const std::int64_t m = k.size(1);
    std::vector<std::uint8_t> headPanels(static_cast<std::size_t>(heads), 0);
    std::int64_t maxGathered = 0;
    for (std::int64_t h = 0; h < heads; ++h) {
        const DensePlan& plan = *plans[static_cast<std::size_t>(h)];
        maxGathered = std::max(maxGathered, static_cast<std::int64_t>(plan.gatheredKeys.size()));
        for (const auto& seg : plan.segments)
            headPanels[static_cast<std::size_t>(h)] |= tiled && seg.keyStep == 1 && !seg.gathered;
    }
    const bool keyPanels = std::find(headPanels.begin(), headPanels.end(), 1) != headPanels.end();
    std::int64_t stridedFloats = 0;
    for (std::int64_t h = 0; h < heads; ++h)
        if (const std::int64_t step = plans[static_cast<std::size_t>(h)]->strided.step; step > 0)
            stridedFloats =
                std::max(stridedFloats, stridedKeysScratchFloats(n, d, step, headPanels[static_cast<std::size_t>(h)]));
    // gathered copies: [keys in panels (tiled)][keys as rows][values as rows]
    const std::int64_t gatheredPanels = tiled ? panelFloats(maxGathered, d) : 0;
    const std::int64_t gatheredFloats = maxGathered > 0 ? gatheredPanels + 2 * maxGathered * d : 0;
    std::vector<std::int64_t> residueStep(static_cast<std::size_t>(heads), 0);
    std::int64_t residueFloats = 0;
    for (std::int64_t h = 0; h < heads; ++h)
        for (const auto& seg : plans[static_cast<std::size_t>(h)]->segments)
            if (seg.keyStep > 1 && seg.keyStep * d >= kResidueCopyMinStride) {
                residueStep[static_cast<std::size_t>(h)] = seg.keyStep;
                residueFloats = std::max(residueFloats, ResidueRows::floats(seg.keyStep, m, d, tiled) +
                                                            ResidueRows::floats(seg.keyStep, m, d, false));
                break;
            }

    const int threads = std::max(1, at::get_num_threads());
    std::vector<DenseScratch> scratch(static_cast<std::size_t>(threads));
    std::uint64_t workspaceBytes = 0;
    for (int t = 0; t < threads; ++t) {
        DenseScratch& ws = scratch[static_cast<std::size_t>(t)];
        const std::string tag = input.slot + ".dense" + std::to_string(t);
        ws.scores = ctx.pool().workspace(tag + ".scores", {maxRows * (maxKeys + kScorePad) + kScorePad});
        if (gathers) {
            ws.gatherK = ctx.pool().workspace(tag + ".k", {maxKeys * d});
            ws.gatherV = ctx.pool().workspace(tag + ".v", {maxKeys * d});
        }
        if (merge) {
            ws.part = ctx.pool().workspace(tag + ".part", {maxRows * (d + 2) + 2 * n});
            ws.accMax = ws.part.data_ptr<float>() + maxRows * (d + 2);
            ws.accSum = ws.accMax + n;
        }
        if (residueFloats > 0) ws.residue = ctx.pool().workspace(tag + ".residue", {residueFloats});
        if (keyPanels) ws.keyPanels = ctx.pool().workspace(tag + ".keyPanels", {panelFloats(m, d)});
        if (gatheredFloats > 0) ws.gathered = ctx.pool().workspace(tag + ".gathered", {gatheredFloats});
        if (stridedFloats > 0) ws.strided = ctx.pool().workspace(tag + ".strided", {stridedFloats});
        ws.groupStatus.assign(static_cast<std::size_t>(maxRows), 0);
        ws.rowLo.resize(static_cast<std::size_t>(maxRows));
        ws.rowHi.resize(static_cast<std::size_t>(maxRows));
        ws.mergeScale.resize(static_cast<std::size_t>(2 * maxRows));
        workspaceBytes +=
            static_cast<std::uint64_t>(maxRows * (maxKeys + kScorePad) + kScorePad + (gathers ? 2 * maxKeys * d : 0) +
                                       (merge ? maxRows * (d + 2) + 2 * n : 0) + residueFloats +
                                       (keyPanels ? panelFloats(m, d) : 0) + gatheredFloats + stridedFloats) *
            4;
    }

    auto outBuffer = ctx.pool().resultBuffer(input.slot + ".output", static_cast<std::size_t>(heads * n * d));
    float* outBase = outBuffer->data();
    const at::Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    const float* qBase = qc.data_ptr<float>();
    const float* kBase = kc.data_ptr<float>();
    const float* vBase = vc.data_ptr<float>();
    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    PlainTensor rowShift = ctx.pool().zeros(DType::F32, {heads, n}), rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    std::fill(rowShift.f32.begin(), rowShift.f32.end(), kMinusInf);

    // Unscanned explicit values (RunContext::uncheckedQkv): each worker scans the heads it
    // prepares, K in its copy into panels (and Q, V in the strided keys pass's copies).
    const bool scanValues = ctx.uncheckedQkv != nullptr;
    std::atomic<bool> nonFinite{false};
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> itemsDone{0};
    const auto total = static_cast<std::int64_t>(items.size());
    {
        SingleThreadedBlas singleBlas;
        // Items are claimed one at a time (not split in fixed halves), so that a thread the
        // scheduler holds back on a busy machine does not leave the other waiting at the end.
        std::atomic<std::int64_t> next{0};
        at::parallel_for(0, std::min<std::int64_t>(threads, total), 1, [&](std::int64_t, std::int64_t) {
            c10::InferenceMode guard;  // the caller's mode is thread-local
            const int tid = std::min(at::get_thread_num(), threads - 1);
            DenseScratch& ws = scratch[static_cast<std::size_t>(tid)];
            for (std::int64_t it = next.fetch_add(1); it < total && !stop.load(std::memory_order_relaxed);
                 it = next.fetch_add(1)) {
                const Item& item = items[static_cast<std::size_t>(it)];
                const std::int64_t h = item.head;
                const DensePlan& plan = *plans[static_cast<std::size_t>(h)];
                float* op = outBase + h * n * d;
                if (merge) {
                    // (no zeroing of the output: a row's first part writes it, and rows that no
                    // group reaches are zeroed at the end)
                    std::fill(ws.accMax, ws.accMax + n, kMinusInf);
                    std::fill(ws.accSum, ws.accSum + n, 0.0f);
                }
                const float* qp = qBase + h * n * d;
                const float* kp = kBase + h * m * d;
                const float* vp = vBase + h * m * d;
                std::uint8_t* rowStatus = status.u8.data() + h * n;
                ws.rowShift = rowShift.f32.data() + h * n;
                ws.rowSum = rowSum.f32.data() + h * n;
                ws.keyPadding = keyPadding ? input.keyPadding.data() : nullptr;
                ws.masking = keyPadding || !plan.excluded.empty();
                bool headNonFinite = false;
                if (ws.preparedHead != h) {
                    ws.preparedHead = h;
                    ws.residueK = ws.residueV = ResidueRows{};
                    ws.keySource = RowSource{kp, nullptr, nullptr, {}};
                    ws.valueSource = RowSource{vp, nullptr, nullptr, {}};
                    if (const std::int64_t step = residueStep[static_cast<std::size_t>(h)]; step > 0) {
                        float* copy = ws.residue.data_ptr<float>();
                        ws.residueK.reset(copy, kp, step, m, d, tiled);
                        ws.residueV.reset(copy + ResidueRows::floats(step, m, d, tiled), vp, step, m, d, false);
                        ws.keySource.residue = &ws.residueK;
                        ws.valueSource.residue = &ws.residueV;
                    }
                    if (headPanels[static_cast<std::size_t>(h)]) {
                        copyToPanels(m, d, kp, d, ws.keyPanels.data_ptr<float>(), scanValues ? &headNonFinite : nullptr);
                        ws.keySource.panels = ws.keyPanels.data_ptr<float>();
                    } else if (scanValues) {
                        headNonFinite = !allFinite(kp, static_cast<std::size_t>(m * d));
                    }
                    if (scanValues && plan.strided.step == 0)
                        headNonFinite = headNonFinite || !allFinite(qp, static_cast<std::size_t>(n * d)) ||
                                        !allFinite(vp, static_cast<std::size_t>(m * d));
                    if (headNonFinite) {
                        nonFinite = true;
                        stop = true;
                        continue;
                    }
                    if (const auto count = static_cast<std::int64_t>(plan.gatheredKeys.size()); count > 0) {
                        float* keyPanelsCopy = ws.gathered.data_ptr<float>();
                        float* keysCopy = keyPanelsCopy + gatheredPanels;
                        float* valuesCopy = keysCopy + maxGathered * d;
                        for (std::int64_t t = 0; t < count; ++t) {
                            const std::int64_t j = plan.gatheredKeys[static_cast<std::size_t>(t)];
                            std::memcpy(keysCopy + t * d, kp + j * d, static_cast<std::size_t>(d) * sizeof(float));
                            std::memcpy(valuesCopy + t * d, vp + j * d, static_cast<std::size_t>(d) * sizeof(float));
                        }
                        if (tiled) {
                            copyToPanels(count, d, keysCopy, d, keyPanelsCopy);
                            ws.keySource.gathered = RowsView{keyPanelsCopy, 0, true, 0};
                        } else {
                            ws.keySource.gathered = RowsView{keysCopy, d};
                        }
                        ws.valueSource.gathered = RowsView{valuesCopy, d};
                    }
                }
                for (std::int64_t gi = item.group0; gi < item.group1; ++gi)
                    runDenseGroup(plan, plan.groups[static_cast<std::size_t>(gi)], qp, kp, vp, op, d, scale, merge, ws,
                                  rowStatus);
                if (plan.strided.step > 0) {
                    StridedKeysPass pass;
                    pass.n = n;
                    pass.d = d;
                    pass.step = plan.strided.step;
                    pass.gap = plan.strided.gap;
                    pass.above = plan.strided.above;
                    pass.scale = scale;
                    pass.q = qp;
                    pass.k = kp;
                    pass.v = vp;
                    pass.rowMax = ws.accMax;
                    pass.rowSum = ws.accSum;
                    pass.out = op;
                    pass.nonFinite = scanValues ? &headNonFinite : nullptr;
                    pass.normalise = true;
                    const std::int64_t added =
                        addStridedKeys(pass, ws.keySource.panels, ws.strided.data_ptr<float>());
                    ws.entries += added;
                    ws.allowed += added;
                    if (headNonFinite) {
                        nonFinite = true;
                        stop = true;
                        continue;
                    }
                }
                if (merge) {
                    for (std::int64_t i = 0; i < n; ++i) {
                        float* o = op + i * d;
                        if (ws.accSum[i] == 0.0f) {
                            std::fill(o, o + d, 0.0f);
                            rowStatus[i] = 1;
                            ++ws.emptyRows;
                            continue;
                        }
                        ws.rowShift[i] = ws.accMax[i] * scale;
                        ws.rowSum[i] = ws.accSum[i];
                        if (plan.strided.step > 0) continue;  // (the strided keys pass normalised it)
                        const float inv = 1.0f / ws.accSum[i];
                        for (std::int64_t c = 0; c < d; ++c) o[c] *= inv;
                    }
                }
                const std::int64_t done = itemsDone.fetch_add(1) + 1;
                if (tid == 0) {
                    try {
                        ctx.checkpoint("attention", done * heads / std::max<std::int64_t>(total, 1), heads);
                    } catch (...) {
                        stop = true;
                        throw;
                    }
                }
            }
        });
    }

    if (nonFinite) ctx.failNonFiniteQkv();
    ctx.uncheckedQkv = nullptr;  // every head was scanned

    std::int64_t emptyRows = 0, entriesComputed = 0, allowed = 0;
    for (const auto& ws : scratch) {
        emptyRows += ws.emptyRows;
        entriesComputed += ws.entries;
        allowed += ws.allowed;
    }
    // Padded queries: zeroed rows (row_status 2), whatever their keys gave.
    if (!input.queryPadding.empty())
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t i = 0; i < n; ++i) {
                if (!input.queryPadding[static_cast<std::size_t>(i)]) continue;
                std::uint8_t& st = status.u8[static_cast<std::size_t>(h * n + i)];
                if (st == 1) --emptyRows;
                st = 2;
                rowShift.f32[static_cast<std::size_t>(h * n + i)] = kMinusInf;
                rowSum.f32[static_cast<std::size_t>(h * n + i)] = 0.0f;
                std::fill(outBase + (h * n + i) * d, outBase + (h * n + i + 1) * d, 0.0f);
            }
    ctx.checkpoint("attention", heads, heads);

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.emptyRowCount = emptyRows;
    result.stats["row_max"] = std::move(rowShift);
    result.stats["row_sum"] = std::move(rowSum);
    keepRowStatus(std::move(status), result, ctx);
    auto& c = ctx.counters();
    c.flops += 4.0 * static_cast<double>(allowed) * static_cast<double>(d);
    c.entriesComputed += entriesComputed;
    ctx.noteBytes(outBuffer->size() * sizeof(float) + workspaceBytes + static_cast<std::uint64_t>(heads * n) * 5);
}


}  // namespace attnscope::engine
