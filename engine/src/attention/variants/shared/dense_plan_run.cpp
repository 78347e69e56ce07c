// The pattern variants' kernel (see DensePlan in attention/pattern/block_pattern.h): groups of query rows
// against runs of keys, computed on each block of rows' allowed keys only.

#include "attention/variants/shared/dense_plan_run.h"

#include "base/runtime/worker_threads.h"
#include "base/kernels/blas_gemm.h"
#include "base/kernels/finite_scan.h"
#include "base/kernels/small_gemm.h"
#include "base/kernels/softmax_kernel.h"
#include "attention/pattern/block_pattern.h"
#include "attention/variants/shared/dense_plan_group.h"
#include "attention/variants/shared/dense_plan_rows.h"
#include "attention/variants/shared/strided_keys_pass.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

namespace attnscope::engine {
namespace {

constexpr float kMinusInf = kDenseMinusInf;

// The pattern kernel (see DensePlan). Work is split over the kernels' threads: by group
// when every row lies in one group (groups then write disjoint output rows), else by head (the
// split rows of a head are merged by one thread). Each thread runs the register-tiled products
// (or single-threaded SGEMMs) on its own pooled scratch and per-head copies.
class PatternKernel {
public:
    PatternKernel(const Qkv& qkv, const PatternKernelInput& input, RunContext& ctx)
        : m_input(input), m_ctx(ctx), m_qkv(qkv) {
        m_heads = qkv.heads();
        m_n = qkv.n();
        m_d = qkv.d();
        m_m = qkv.m();
        m_scale = 1.0f / std::sqrt(static_cast<float>(m_d));
        m_tiled = smallGemmInPlace(m_d);
    }

    void run(AttentionResult& result) {
        planHeads();
        planWork();
        planCopies();
        makeScratch();
        allocateKept();
        runItems();
        if (m_nonFinite) m_ctx.failNonFiniteQkv();
        m_ctx.uncheckedQkv = nullptr;  // every head was scanned
        finish(result);
    }

private:
    struct Item {
        std::int64_t head, group0, group1;
    };

    // Each head's plan; with padded keys the strided keys pass (which cannot mask) gives way to
    // explicit groups.
    void planHeads() {
        m_keyPadding = !m_input.keyPadding.empty() &&
                       std::find(m_input.keyPadding.begin(), m_input.keyPadding.end(), 1) != m_input.keyPadding.end();
        m_plans.resize(static_cast<std::size_t>(m_heads));
        m_expanded.reserve(static_cast<std::size_t>(m_heads));
        for (std::int64_t h = 0; h < m_heads; ++h) {
            const DensePlan& plan = m_input.pattern->head(h);
            if (m_keyPadding && plan.strided.step > 0) {
                m_expanded.push_back(expandStridedRule(plan, m_n, m_input.pattern->m));
                m_plans[static_cast<std::size_t>(h)] = &m_expanded.back();
            } else {
                m_plans[static_cast<std::size_t>(h)] = &plan;
            }
        }
    }

    const DensePlan& plan(std::int64_t h) const { return *m_plans[static_cast<std::size_t>(h)]; }

    // The work items (a group each, or a whole head when rows are split over groups) and the
    // largest group the scratch must hold.
    void planWork() {
        for (std::int64_t h = 0; h < m_heads; ++h) {
            const DensePlan& p = plan(h);
            m_merge = m_merge || !p.singleCover || p.strided.step > 0;
            for (const auto& g : p.groups) {
                std::int64_t keys = 0;
                for (std::int64_t si = g.segBegin; si < g.segEnd; ++si) keys += p.segments[static_cast<std::size_t>(si)].keyCount;
                m_maxRows = std::max(m_maxRows, g.rowCount);
                m_maxKeys = std::max(m_maxKeys, keys);
                m_gathers = m_gathers || (g.segEnd - g.segBegin > 1 && !m_tiled);
            }
        }
        m_itemsLeft.reset(new std::atomic<std::int64_t>[static_cast<std::size_t>(m_heads)]);
        for (std::int64_t h = 0; h < m_heads; ++h) {
            const auto groups = static_cast<std::int64_t>(plan(h).groups.size());
            if (m_merge) m_items.push_back({h, 0, groups});
            else
                for (std::int64_t gi = 0; gi < groups; ++gi) m_items.push_back({h, gi, gi + 1});
            m_itemsLeft[static_cast<std::size_t>(h)] = m_merge ? 1 : groups;
        }
    }

    // What each worker copies once per head it works on: the keys of unit-step segments in panels
    // of 8 for the A·B kernel (faster than dot products of key rows on band tiles); the plan's
    // gathered keys and values; and, one residue at a time, the rows of a large-step segment (see
    // ResidueRows). Keys go in panels whenever the register-tiled products serve d.
    void planCopies() {
        m_headPanels.assign(static_cast<std::size_t>(m_heads), 0);
        for (std::int64_t h = 0; h < m_heads; ++h) {
            m_maxGathered = std::max(m_maxGathered, static_cast<std::int64_t>(plan(h).gatheredKeys.size()));
            for (const auto& seg : plan(h).segments)
                m_headPanels[static_cast<std::size_t>(h)] |= m_tiled && seg.keyStep == 1 && !seg.gathered;
        }
        m_keyPanels = std::find(m_headPanels.begin(), m_headPanels.end(), 1) != m_headPanels.end();
        for (std::int64_t h = 0; h < m_heads; ++h)
            if (const std::int64_t step = plan(h).strided.step; step > 0)
                m_stridedFloats =
                    std::max(m_stridedFloats, stridedKeysScratchFloats(m_n, m_d, step, m_headPanels[static_cast<std::size_t>(h)]));
        // gathered copies: [keys in panels (tiled)][keys as rows][values as rows]
        m_gatheredPanels = m_tiled ? panelFloats(m_maxGathered, m_d) : 0;
        m_gatheredFloats = m_maxGathered > 0 ? m_gatheredPanels + 2 * m_maxGathered * m_d : 0;
        m_residueStep.assign(static_cast<std::size_t>(m_heads), 0);
        for (std::int64_t h = 0; h < m_heads; ++h)
            for (const auto& seg : plan(h).segments)
                if (seg.keyStep > 1 && seg.keyStep * m_d >= kResidueCopyMinStride) {
                    m_residueStep[static_cast<std::size_t>(h)] = seg.keyStep;
                    m_residueFloats = std::max(m_residueFloats, ResidueRows::floats(seg.keyStep, m_m, m_d, m_tiled) +
                                                                    ResidueRows::floats(seg.keyStep, m_m, m_d, false));
                    break;
                }
    }

    float* scratch(const std::string& slot, std::int64_t floats) {
        return m_ctx.pool().scratch(slot, static_cast<std::size_t>(floats));
    }

    void makeScratch() {
        m_threads = kernelThreads();
        m_scratch.resize(static_cast<std::size_t>(m_threads));
        const std::int64_t d = m_d, n = m_n;
        for (int t = 0; t < m_threads; ++t) {
            DenseScratch& ws = m_scratch[static_cast<std::size_t>(t)];
            const std::string tag = m_input.slot + ".dense" + std::to_string(t);
            ws.scores = scratch(tag + ".scores", m_maxRows * (m_maxKeys + kScorePad) + kScorePad);
            if (m_gathers) {
                ws.gatherK = scratch(tag + ".k", m_maxKeys * d);
                ws.gatherV = scratch(tag + ".v", m_maxKeys * d);
            }
            if (m_merge) {
                ws.part = scratch(tag + ".part", m_maxRows * (d + 2) + 2 * n);
                ws.accMax = ws.part + m_maxRows * (d + 2);
                ws.accSum = ws.accMax + n;
            }
            if (m_residueFloats > 0) ws.residue = scratch(tag + ".residue", m_residueFloats);
            if (m_keyPanels) ws.keyPanels = scratch(tag + ".keyPanels", panelFloats(m_m, d));
            if (m_gatheredFloats > 0) ws.gathered = scratch(tag + ".gathered", m_gatheredFloats);
            if (m_stridedFloats > 0) ws.strided = scratch(tag + ".strided", m_stridedFloats);
            ws.groupStatus.assign(static_cast<std::size_t>(m_maxRows), 0);
            ws.rowLo.resize(static_cast<std::size_t>(m_maxRows));
            ws.rowHi.resize(static_cast<std::size_t>(m_maxRows));
            ws.mergeScale.resize(static_cast<std::size_t>(2 * m_maxRows));
            m_workspaceBytes +=
                static_cast<std::uint64_t>(m_maxRows * (m_maxKeys + kScorePad) + kScorePad + (m_gathers ? 2 * m_maxKeys * d : 0) +
                                           (m_merge ? m_maxRows * (d + 2) + 2 * n : 0) + m_residueFloats +
                                           (m_keyPanels ? panelFloats(m_m, d) : 0) + m_gatheredFloats + m_stridedFloats) *
                4;
        }
    }

    // The output, the rows' status and statistics (what the result keeps).
    void allocateKept() {
        m_output = m_ctx.pool().resultBuffer(m_input.slot + ".output", static_cast<std::size_t>(m_heads * m_n * m_d));
        m_status = m_ctx.pool().zeros(DType::U8, {m_heads, m_n});
        m_rowShift = m_ctx.pool().zeros(DType::F32, {m_heads, m_n});
        m_rowSum = m_ctx.pool().zeros(DType::F32, {m_heads, m_n});
        std::fill(m_rowShift.f32.begin(), m_rowShift.f32.end(), kMinusInf);
    }

    // Items are claimed one at a time (not split in fixed halves), so that a thread the scheduler
    // holds back on a busy machine does not leave the other waiting at the end. Progress and
    // cancel from the first thread.
    void runItems() {
        // Unscanned explicit values (RunContext::uncheckedQkv): each worker scans the heads it
        // prepares, K in its copy into panels (and Q, V in the strided keys pass's copies).
        m_scanValues = m_ctx.uncheckedQkv != nullptr;
        SingleThreadedBlas singleBlas;
        const auto total = static_cast<std::int64_t>(m_items.size());
        std::atomic<std::int64_t> next{0}, itemsDone{0};
        runOnWorkers(static_cast<int>(std::min<std::int64_t>(m_threads, total)), [&](int tid) {
            DenseScratch& ws = m_scratch[static_cast<std::size_t>(tid)];
            for (std::int64_t it = next.fetch_add(1); it < total && !m_stop.load(std::memory_order_relaxed); it = next.fetch_add(1)) {
                const Item& item = m_items[static_cast<std::size_t>(it)];
                if (!runItem(item, ws)) {
                    m_nonFinite = true;
                    m_stop = true;
                    continue;
                }
                // (items go out in head order: about one head per worker is in memory at a time)
                if (m_itemsLeft[static_cast<std::size_t>(item.head)].fetch_sub(1) == 1) m_ctx.releaseHeadInput(item.head);
                const std::int64_t done = itemsDone.fetch_add(1) + 1;
                if (tid != 0) continue;
                try {
                    m_ctx.checkpoint("attention", done * m_heads / std::max<std::int64_t>(total, 1), m_heads);
                } catch (...) {
                    m_stop = true;
                    throw;
                }
            }
        });
    }

    // The worker's copies of head h (see planCopies). False when a scanned value is not finite.
    bool prepareHead(std::int64_t h, DenseScratch& ws) {
        const std::int64_t n = m_n, m = m_m, d = m_d;
        const float* qp = m_qkv.qHead(h);
        const float* kp = m_qkv.kHead(h);
        const float* vp = m_qkv.vHead(h);
        const DensePlan& p = plan(h);
        ws.preparedHead = h;
        ws.residueK = ws.residueV = ResidueRows{};
        ws.keySource = RowSource{kp, nullptr, nullptr, {}};
        ws.valueSource = RowSource{vp, nullptr, nullptr, {}};
        if (const std::int64_t step = m_residueStep[static_cast<std::size_t>(h)]; step > 0) {
            float* copy = ws.residue;
            ws.residueK.reset(copy, kp, step, m, d, m_tiled);
            ws.residueV.reset(copy + ResidueRows::floats(step, m, d, m_tiled), vp, step, m, d, false);
            ws.keySource.residue = &ws.residueK;
            ws.valueSource.residue = &ws.residueV;
        }
        bool nonFinite = false;
        if (m_headPanels[static_cast<std::size_t>(h)]) {
            copyToPanels(m, d, kp, d, ws.keyPanels, m_scanValues ? &nonFinite : nullptr);
            ws.keySource.panels = ws.keyPanels;
        } else if (m_scanValues) {
            nonFinite = !allFinite(kp, static_cast<std::size_t>(m * d));
        }
        if (m_scanValues && p.strided.step == 0)
            nonFinite = nonFinite || !allFinite(qp, static_cast<std::size_t>(n * d)) || !allFinite(vp, static_cast<std::size_t>(m * d));
        if (nonFinite) return false;
        if (const auto count = static_cast<std::int64_t>(p.gatheredKeys.size()); count > 0) {
            float* keyPanelsCopy = ws.gathered;
            float* keysCopy = keyPanelsCopy + m_gatheredPanels;
            float* valuesCopy = keysCopy + m_maxGathered * d;
            for (std::int64_t t = 0; t < count; ++t) {
                const std::int64_t j = p.gatheredKeys[static_cast<std::size_t>(t)];
                std::memcpy(keysCopy + t * d, kp + j * d, static_cast<std::size_t>(d) * sizeof(float));
                std::memcpy(valuesCopy + t * d, vp + j * d, static_cast<std::size_t>(d) * sizeof(float));
            }
            if (m_tiled) {
                copyToPanels(count, d, keysCopy, d, keyPanelsCopy);
                ws.keySource.gathered = RowsView{keyPanelsCopy, 0, true, 0};
            } else {
                ws.keySource.gathered = RowsView{keysCopy, d};
            }
            ws.valueSource.gathered = RowsView{valuesCopy, d};
        }
        return true;
    }

    // One item: its groups, the head's strided keys, and for split rows their normalisation.
    // False when a scanned value is not finite.
    bool runItem(const Item& item, DenseScratch& ws) {
        const std::int64_t h = item.head, n = m_n, d = m_d;
        const DensePlan& p = plan(h);
        float* op = m_output->data() + h * n * d;
        const float* qp = m_qkv.qHead(h);
        const float* kp = m_qkv.kHead(h);
        const float* vp = m_qkv.vHead(h);
        if (m_merge) {
            // (no zeroing of the output: a row's first part writes it, and rows that no group
            // reaches are zeroed at the end)
            std::fill(ws.accMax, ws.accMax + n, kMinusInf);
            std::fill(ws.accSum, ws.accSum + n, 0.0f);
        }
        std::uint8_t* rowStatus = m_status.u8.data() + h * n;
        ws.rowShift = m_rowShift.f32.data() + h * n;
        ws.rowSum = m_rowSum.f32.data() + h * n;
        ws.keyPadding = m_keyPadding ? m_input.keyPadding.data() : nullptr;
        ws.masking = m_keyPadding || !p.excluded.empty();
        if (ws.preparedHead != h && !prepareHead(h, ws)) return false;
        for (std::int64_t gi = item.group0; gi < item.group1; ++gi)
            runDenseGroup(p, p.groups[static_cast<std::size_t>(gi)], qp, kp, vp, op, d, m_scale,
                          m_merge ? GroupRows::Part : GroupRows::Whole, ws, rowStatus);
        if (p.strided.step > 0 && !stridedKeys(p, qp, kp, vp, op, ws)) return false;
        if (m_merge) normaliseSplitRows(p, op, rowStatus, ws);
        return true;
    }

    // The strided rule's keys (sparse_strided's every l-th key), added to the rows' running
    // results and normalised by the pass.
    bool stridedKeys(const DensePlan& p, const float* qp, const float* kp, const float* vp, float* op, DenseScratch& ws) {
        bool nonFinite = false;
        StridedKeysPass pass;
        pass.n = m_n;
        pass.d = m_d;
        pass.step = p.strided.step;
        pass.gap = p.strided.gap;
        pass.above = p.strided.above;
        pass.scale = m_scale;
        pass.q = qp;
        pass.k = kp;
        pass.v = vp;
        pass.rowMax = ws.accMax;
        pass.rowSum = ws.accSum;
        pass.out = op;
        pass.nonFinite = m_scanValues ? &nonFinite : nullptr;
        pass.normalise = true;
        const std::int64_t added = addStridedKeys(pass, ws.keySource.panels, ws.strided);
        ws.entries += added;
        ws.allowed += added;
        return !nonFinite;
    }

    // Split rows: empty ones zeroed and flagged, the others' statistics kept and their output
    // divided by their sum (unless the strided keys pass did it).
    void normaliseSplitRows(const DensePlan& p, float* op, std::uint8_t* rowStatus, DenseScratch& ws) const {
        for (std::int64_t i = 0; i < m_n; ++i) {
            float* o = op + i * m_d;
            if (ws.accSum[i] == 0.0f) {
                std::fill(o, o + m_d, 0.0f);
                rowStatus[i] = 1;
                ++ws.emptyRows;
                continue;
            }
            ws.rowShift[i] = ws.accMax[i] * m_scale;
            ws.rowSum[i] = ws.accSum[i];
            if (p.strided.step > 0) continue;  // (the strided keys pass normalised it)
            const float inv = 1.0f / ws.accSum[i];
            for (std::int64_t c = 0; c < m_d; ++c) o[c] *= inv;
        }
    }

    // Padded queries zeroed (row_status 2, whatever their keys gave); the counters and what the
    // result keeps.
    void finish(AttentionResult& result) {
        std::int64_t emptyRows = 0, entriesComputed = 0, allowed = 0;
        for (const auto& ws : m_scratch) {
            emptyRows += ws.emptyRows;
            entriesComputed += ws.entries;
            allowed += ws.allowed;
        }
        float* outBase = m_output->data();
        if (!m_input.queryPadding.empty())
            for (std::int64_t h = 0; h < m_heads; ++h)
                for (std::int64_t i = 0; i < m_n; ++i) {
                    if (!m_input.queryPadding[static_cast<std::size_t>(i)]) continue;
                    std::uint8_t& st = m_status.u8[static_cast<std::size_t>(h * m_n + i)];
                    if (st == 1) --emptyRows;
                    st = 2;
                    m_rowShift.f32[static_cast<std::size_t>(h * m_n + i)] = kMinusInf;
                    m_rowSum.f32[static_cast<std::size_t>(h * m_n + i)] = 0.0f;
                    std::fill(outBase + (h * m_n + i) * m_d, outBase + (h * m_n + i + 1) * m_d, 0.0f);
                }
        m_ctx.checkpoint("attention", m_heads, m_heads);
        result.output = SharedTensorF32{{m_heads, m_n, m_d}, m_output};
        result.emptyRowCount = emptyRows;
        result.stats["row_max"] = std::move(m_rowShift);
        result.stats["row_sum"] = std::move(m_rowSum);
        keepRowStatus(std::move(m_status), result, m_ctx);
        auto& c = m_ctx.counters();
        c.flops += 4.0 * static_cast<double>(allowed) * static_cast<double>(m_d);
        c.entriesComputed += entriesComputed;
        m_ctx.noteBytes(m_output->size() * sizeof(float) + m_workspaceBytes + static_cast<std::uint64_t>(m_heads * m_n) * 5);
    }

    const PatternKernelInput& m_input;
    RunContext& m_ctx;
    const Qkv& m_qkv;
    std::int64_t m_heads = 0, m_n = 0, m_m = 0, m_d = 0;
    float m_scale = 1.0f;
    bool m_tiled = false, m_keyPadding = false, m_merge = false, m_gathers = false, m_keyPanels = false, m_scanValues = false;
    std::vector<const DensePlan*> m_plans;
    std::vector<DensePlan> m_expanded;
    std::vector<Item> m_items;
    std::unique_ptr<std::atomic<std::int64_t>[]> m_itemsLeft;  ///< [heads]: items not yet run
    std::int64_t m_maxRows = 1, m_maxKeys = 1, m_maxGathered = 0, m_gatheredPanels = 0, m_gatheredFloats = 0,
                 m_stridedFloats = 0, m_residueFloats = 0;
    std::vector<std::uint8_t> m_headPanels;
    std::vector<std::int64_t> m_residueStep;
    int m_threads = 1;
    std::vector<DenseScratch> m_scratch;
    std::uint64_t m_workspaceBytes = 0;
    std::shared_ptr<std::vector<float>> m_output;
    PlainTensor m_status, m_rowShift, m_rowSum;
    std::atomic<bool> m_nonFinite{false}, m_stop{false};
};

}  // namespace

void runPatternKernel(const Qkv& qkv, const PatternKernelInput& input, RunContext& ctx, AttentionResult& result) {
    PatternKernel(qkv, input, ctx).run(result);
}

}  // namespace attnscope::engine
