// `full`: exact softmax attention (Vaswani et al. 2017), the baseline every variant is measured
// against, without LibTorch: each head in one fused pass (base/kernels/flash_attention.h) — blocks of
// queries against blocks of keys in cache, an online softmax, the weighted values accumulated —
// so memory is the output and the row statistics every weight is recomputed from, besides a
// worker's packed keys; causal skips the blocks above the diagonal.

#include "base/kernels/parallel_heads.h"
#include "base/kernels/flash_attention.h"
#include "base/api/param_access.h"
#include "attention/variants/variant.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

namespace attnscope::engine {
namespace {

// Query–key pairs a head scores: all, or the causal ones (key j visible to query i iff j <= i + m − n).
std::int64_t visiblePairs(std::int64_t n, std::int64_t m, bool causal) {
    if (!causal) return n * m;
    std::int64_t pairs = 0;
    for (std::int64_t i = 0; i < n; ++i) pairs += std::clamp<std::int64_t>(i + m - n + 1, 0, m);
    return pairs;
}

// Progress and cancel inside a head (one head of 32k queries takes seconds): the first worker
// reports the rows done across workers and learns of a cancel; the others stop at their next block.
struct RowProgress {
    RunContext& ctx;
    std::int64_t total = 0;
    std::atomic<std::int64_t> done{0};
    std::atomic<bool> cancelled{false};
};

struct WorkerProgress {
    RowProgress* shared;
    int worker;
    std::int64_t reported = 0;  ///< rows of the current head already added to `done`
};

bool keepGoing(void* context, std::int64_t rowsDone) {
    auto& w = *static_cast<WorkerProgress*>(context);
    const std::int64_t done = w.shared->done.fetch_add(rowsDone - w.reported) + rowsDone - w.reported;
    w.reported = rowsDone;
    if (w.worker == 0 && !w.shared->cancelled.load()) {
        try {
            w.shared->ctx.checkpoint("attention", done, w.shared->total);
        } catch (const CancelledError&) {
            w.shared->cancelled = true;
        }
    }
    return !w.shared->cancelled.load();
}

class FullAttention final : public Variant {
public:
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues&) const override {
        // output, row statistics and status; a worker's packed keys and blocks
        return static_cast<std::uint64_t>(s.heads * s.n * (s.d * 4 + 9)) +
               static_cast<std::uint64_t>(headWorkers(s.heads)) * flashScratchBytes(s.m, s.d);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
};

AttentionResult FullAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d();
    const bool causal = paramBool(params, "causal");
    AttentionResult result = startResult(info().id, params, qkv);

    ctx.beginStage("attention");
    auto outBuffer = ctx.pool().resultBuffer("full.output", static_cast<std::size_t>(heads * n * d));
    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    PlainTensor rowShift = ctx.pool().zeros(DType::F32, {heads, n}), rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    std::vector<FlashScratch> scratch(static_cast<std::size_t>(headWorkers(heads)));
    std::vector<std::int64_t> emptyPerHead(static_cast<std::size_t>(heads), 0);
    const bool padQueries = !qkv.keyPadding.empty() && n == m;
    RowProgress progress{ctx, heads * n};
    std::vector<WorkerProgress> workers;
    for (std::size_t w = 0; w < scratch.size(); ++w) workers.push_back(WorkerProgress{&progress, static_cast<int>(w)});
    forEachHead(heads, "attention", ctx, [&](std::int64_t h, int worker) {
        if (progress.cancelled) return;
        WorkerProgress& mine = workers[static_cast<std::size_t>(worker)];
        mine.reported = 0;
        FlashHead head;
        head.q = qkv.q.data.get() + h * n * d;
        head.k = qkv.k.data.get() + h * m * d;
        head.v = qkv.v.data.get() + h * m * d;
        head.out = outBuffer->data() + h * n * d;
        head.rowShift = rowShift.f32.data() + h * n;
        head.rowSum = rowSum.f32.data() + h * n;
        head.status = status.u8.data() + h * n;
        head.n = n;
        head.m = m;
        head.d = d;
        head.scale = 1.0f / std::sqrt(static_cast<float>(d));
        head.causal = causal;
        head.keyPadding = qkv.keyPadding.empty() ? nullptr : qkv.keyPadding.data();
        head.padQueries = padQueries;
        head.keepGoing = &keepGoing;
        head.context = &mine;
        emptyPerHead[static_cast<std::size_t>(h)] = flashAttentionHead(head, scratch[static_cast<std::size_t>(worker)]);
    });
    if (progress.cancelled) throw CancelledError();
    ctx.endStage();

    std::int64_t empty = 0;
    for (std::int64_t e : emptyPerHead) empty += e;
    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.stats["row_max"] = std::move(rowShift);
    result.stats["row_sum"] = std::move(rowSum);
    result.emptyRowCount = empty;
    keepRowStatus(std::move(status), result, ctx);

    auto& c = ctx.counters();
    c.entriesComputed = heads * visiblePairs(n, m, causal);
    c.flops = 4.0 * static_cast<double>(c.entriesComputed) * static_cast<double>(d);
    std::uint64_t scratchBytes = 0;
    for (const FlashScratch& s : scratch)
        scratchBytes += (s.keys.capacity() + s.values.capacity() + s.scores.capacity() + s.output.capacity() + s.rowMax.capacity()) *
                            sizeof(float) + s.rowSum.capacity() * sizeof(double);
    ctx.noteBytes(outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(heads * n) * 9 + scratchBytes);
    result.counters = c;
    return result;
}

}  // namespace

namespace variants::full {
std::unique_ptr<Variant> kernel() { return std::make_unique<FullAttention>(); }
}  // namespace variants::full

}  // namespace attnscope::engine
