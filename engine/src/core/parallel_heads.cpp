#include "core/parallel_heads.h"

#include "core/worker_threads.h"
#include "kernels/blas_gemm.h"

#include <algorithm>
#include <atomic>

namespace attnscope::engine {

int headWorkers(std::int64_t heads) {
    const int threads = kernelThreads();
    return heads >= threads ? threads : 1;
}

void forEachHead(std::int64_t heads, const char* stage, RunContext& ctx,
                 const std::function<void(std::int64_t head, int worker)>& job) {
    const int workers = headWorkers(heads);
    if (workers == 1) {
        for (std::int64_t h = 0; h < heads; ++h) {
            job(h, 0);
            ctx.checkpoint(stage, h + 1, heads);
        }
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
    ctx.checkpoint(stage, heads, heads);
}

}  // namespace attnscope::engine
