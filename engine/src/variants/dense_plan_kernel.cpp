// The pattern variants' kernel (see DensePlan in pattern/block_pattern.h): groups of query rows
// against runs of keys, computed on each block of rows' allowed keys only.

#include "variants/dense_plan_kernel.h"

#include "kernels/blas_gemm.h"
#include "kernels/finite_scan.h"
#include "kernels/small_gemm.h"
#include "kernels/softmax_kernel.h"
#include "pattern/block_pattern.h"
#include "variants/dense_plan_group.h"
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

constexpr float kMinusInf = kDenseMinusInf;

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
                    runDenseGroup(plan, plan.groups[static_cast<std::size_t>(gi)], qp, kp, vp, op, d, scale,
                                  merge ? GroupRows::Part : GroupRows::Whole, ws,
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
