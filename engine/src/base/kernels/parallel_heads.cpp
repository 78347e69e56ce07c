#include "base/kernels/parallel_heads.h"

#include "base/runtime/worker_threads.h"
#include "base/kernels/blas_gemm.h"
#include "base/kernels/finite_scan.h"

#include <algorithm>
#include <atomic>

namespace attnscope::engine {

namespace {

// Every value of head h's q, k and v is finite.
bool headFinite(const SharedQkv& qkv, std::int64_t h) {
    const auto finite = [h](const SharedFloats& t) {
        const std::int64_t perHead = t.shape[1] * t.shape[2];
        return allFinite(t.data.get() + h * perHead, static_cast<std::size_t>(perHead));
    };
    return finite(qkv.q) && finite(qkv.k) && finite(qkv.v);
}

}  // namespace

int headWorkers(std::int64_t heads) {
    const int threads = kernelThreads();
    return heads >= threads ? threads : 1;
}

void forEachHead(std::int64_t heads, const char* stage, RunContext& ctx,
                 const std::function<void(std::int64_t head, int worker)>& scannedJob) {
    // Unscanned explicit values (RunContext::uncheckedQkv): the worker that runs a head scans its
    // q, k and v first, and a head with a NaN or an infinity is not run.
    const SharedQkv* unchecked = ctx.uncheckedQkv;
    std::atomic<bool> nonFinite{false};
    const auto job = [&](std::int64_t h, int worker) {
        if (unchecked && !headFinite(*unchecked, h)) {
            nonFinite = true;
            return;
        }
        scannedJob(h, worker);
        ctx.releaseHeadInput(h);
    };
    const auto finish = [&] {
        if (!unchecked) return;
        if (nonFinite) ctx.failNonFiniteQkv();
        ctx.uncheckedQkv = nullptr;  // every head was scanned
    };
    const int workers = headWorkers(heads);
    if (workers == 1) {
        for (std::int64_t h = 0; h < heads; ++h) {
            job(h, 0);
            ctx.checkpoint(stage, h + 1, heads);
        }
        finish();
        return;
    }
    SingleThreadedBlas singleBlas;
    std::atomic<std::int64_t> next{0}, done{0};
    std::atomic<bool> stop{false};
    runOnWorkers(workers, [&](int worker) {
        for (std::int64_t h = next.fetch_add(1); h < heads && !stop.load(std::memory_order_relaxed); h = next.fetch_add(1)) {
            job(h, worker);
            const std::int64_t finished = done.fetch_add(1) + 1;
            if (worker != 0) continue;
            try {
                ctx.checkpoint(stage, finished, heads);
            } catch (...) {
                stop = true;
                throw;
            }
        }
    });
    finish();
    ctx.checkpoint(stage, heads, heads);
}

}  // namespace attnscope::engine
