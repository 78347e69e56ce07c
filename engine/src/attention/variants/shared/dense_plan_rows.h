#pragma once
// Where the dense-plan kernel (dense_plan_kernel.cpp) reads a group's keys and values: the head's
// rows in place, a per-residue copy, the head's keys in panels of 8, or a copy of the plan's
// gathered keys. Internal to that kernel.

#include "base/kernels/small_gemm.h"
#include "attention/pattern/block_pattern.h"

#include <cstdint>
#include <cstring>

namespace attnscope::engine {

// Segment strides (floats) from which segments read a per-residue copy (1024 floats = 4 KiB:
// larger strides put every row in the same L1 set).
constexpr std::int64_t kResidueCopyMinStride = 1024;

// Floats of `count` keys in panels of 8 (copyToPanels).
inline std::int64_t panelFloats(std::int64_t count, std::int64_t d) { return (count + 7) / 8 * 8 * d; }

// Key (or value) rows as the products read them: row t at p + t·ld or, for keys in panels of 8
// (copyToPanels), key first + t of the panels at p.
struct RowsView {
    const float* p = nullptr;
    std::int64_t ld = 0;
    bool panels = false;
    std::int64_t first = 0;

    /// The same rows from row t on.
    RowsView from(std::int64_t t) const { return panels ? RowsView{p, ld, true, first + t} : RowsView{p + t * ld, ld}; }
};

// The keys (or values) of one residue class of a large step s, copied into contiguous rows (or,
// for keys, panels): rows j = r, r + s, r + 2s, ... of a head, for the residue r a group
// reads. Read in place, such rows are s·d floats apart (32 KiB for sparse_strided's l = 128):
// every row falls in the same L1 set, and the products ran at about half their rate on
// contiguous rows. One residue at a time (the plans list a residue's groups together), so the
// copy stays in cache.
struct ResidueRows {
    float* rows = nullptr;          ///< the copy of the residue `held`: [perResidue, d] or panels
    const float* source = nullptr;  ///< this head's [m, d] rows
    std::int64_t step = 0, perResidue = 0, m = 0, d = 0, held = -1, prefetchNext = 0;
    bool panels = false;

    /// Floats of the copy for these sizes.
    static std::int64_t floats(std::int64_t step, std::int64_t m, std::int64_t d, bool panels) {
        const std::int64_t per = (m + step - 1) / step;
        return panels ? panelFloats(per, d) : per * d;
    }
    void reset(float* buffer, const float* headRows, std::int64_t stepIn, std::int64_t mIn, std::int64_t dIn,
               bool panelsIn) {
        rows = buffer;
        source = headRows;
        step = stepIn;
        m = mIn;
        d = dIn;
        perResidue = (mIn + stepIn - 1) / stepIn;
        panels = panelsIn;
        held = -1;
        prefetchNext = 0;  // the first residue, while the head's other groups run
    }
    /// Makes the copy hold the residue of the group's first segment with this step.
    void prepare(const DensePlan& plan, const DenseGroup& g) {
        if (!rows) return;
        for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
            const DenseSegment& seg = plan.segments[static_cast<std::size_t>(si)];
            if (seg.keyStep != step) continue;
            const std::int64_t r = seg.keyStart % step;
            if (r != held) {
                const std::int64_t count = (m - r + step - 1) / step;
                if (panels) {
                    copyToPanels(count, d, source + r * d, step * d, rows);
                } else {
                    for (std::int64_t u = 0; u < count; ++u)
                        std::memcpy(rows + u * d, source + (r + u * step) * d,
                                    static_cast<std::size_t>(d) * sizeof(float));
                }
                held = r;
                prefetchNext = r + 1 < step ? r + 1 : m;  // the next residue's first row
            }
            return;
        }
    }
    /// Prefetches up to `count` more rows of the next residue: its rows are s·d floats apart, a
    /// stride no hardware prefetcher follows, so a copy that waits for them is bound by memory
    /// latency; fetched a few at a time while this residue is computed, they are in cache.
    void prefetchSome(std::int64_t count) {
        for (; count > 0 && prefetchNext < m; --count, prefetchNext += step)
            for (std::int64_t c = 0; c < d; c += 16) __builtin_prefetch(source + prefetchNext * d + c, 0, 2);
    }
    bool holds(const DenseSegment& seg) const { return rows && seg.keyStep == step && seg.keyStart % step == held; }
    RowsView view(const DenseSegment& seg) const {
        return (panels ? RowsView{rows, 0, true, 0} : RowsView{rows, d}).from(seg.keyStart / step);
    }
};

// Where a group's keys (or values) are read: the head's rows in place, the residue copy, the copy
// of the gathered keys, or (keys of unit step) the head's keys in panels.
struct RowSource {
    const float* base = nullptr;  ///< this head's [m, d] rows
    const ResidueRows* residue = nullptr;
    const float* panels = nullptr;  ///< the head's keys in panels of 8, or null
    RowsView gathered;              ///< the head's copy of the plan's gathered keys (row 0 = first)

    RowsView locate(const DenseSegment& seg, std::int64_t d) const {
        if (seg.gathered) return gathered.from(seg.keyStart);
        if (residue && residue->holds(seg)) return residue->view(seg);
        if (panels && seg.keyStep == 1) return RowsView{panels, 0, true, seg.keyStart};
        return RowsView{base + seg.keyStart * d, seg.keyStep * d};
    }
};

// The keys (or values) of a group's several segments copied together into `gather` (rows of d).
inline const float* gatherRows(const float* base, std::int64_t d, const DensePlan& plan, const DenseGroup& g, float* gather) {
    float* dst = gather;
    for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) {
        const DenseSegment& seg = plan.segments[static_cast<std::size_t>(si)];
        if (seg.gathered) {
            for (std::int64_t t = 0; t < seg.keyCount; ++t)
                std::memcpy(
                    dst + t * d,
                    base + static_cast<std::int64_t>(plan.gatheredKeys[static_cast<std::size_t>(seg.keyStart + t)]) * d,
                    static_cast<std::size_t>(d) * sizeof(float));
        } else if (seg.keyStep == 1) {
            std::memcpy(dst, base + seg.keyStart * d, static_cast<std::size_t>(seg.keyCount * d) * sizeof(float));
        } else {
            for (std::int64_t t = 0; t < seg.keyCount; ++t)
                std::memcpy(dst + t * d, base + (seg.keyStart + t * seg.keyStep) * d, static_cast<std::size_t>(d) * sizeof(float));
        }
        dst += seg.keyCount * d;
    }
    return gather;
}

}  // namespace attnscope::engine
