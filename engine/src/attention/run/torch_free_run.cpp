#include <attnscope/torch_free_run.h>

#include "base/runtime/buffer_pool.h"
#include "base/runtime/plain_guard.h"
#include "base/runtime/worker_threads.h"
#include "base/kernels/blas_gemm.h"
#include "attention/run/planned_run.h"
#include "attention/variants/variant.h"

#include <attnscope/memory_budget.h>
#include <attnscope/variant_catalog.h>

#include <algorithm>
#include <thread>

namespace attnscope::engine {

namespace {

// Joins a thread when the scope ends, however it ends.
struct JoinAtExit {
    std::thread& thread;
    ~JoinAtExit() {
        if (thread.joinable()) thread.join();
    }
};

// (every variant's run is plain C++: the engine's registry serves the launcher too)
const Variant* findTorchFree(const std::string& id) { return findVariant(id); }

}  // namespace

bool isTorchFreeVariant(const std::string& variantId) { return findTorchFree(variantId) != nullptr; }

bool canRunTorchFree(const RunRequest& request) {
    if (!request.hasExplicitQkv() || request.variants.empty()) return false;
    return std::all_of(request.variants.begin(), request.variants.end(),
                       [](const VariantRequest& v) { return isTorchFreeVariant(v.id); });
}

Result<std::shared_ptr<const RunResult>> runTorchFree(const RunRequest& request, const TorchFreeRunOptions& options,
                                                      const ProgressFn& progress) {
    if (!canRunTorchFree(request))
        return makeError(ErrorCode::InvalidArgument, "this request needs LibTorch (explicit q, k, v and torch-free variants only)");
    return guardedPlain("out of memory: try a sparse variant or a shorter input", [&]() -> Result<std::shared_ptr<const RunResult>> {
        const int threads = options.threads > 0 ? options.threads
                                                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        setKernelThreads(threads);
        setBlasThreads(threads);
        std::string available;
        for (const auto& v : allVariants()) available += (available.empty() ? "" : ", ") + v->info().id;
        // The BLAS loads on the second core while the run sets up, instead of before its first product.
        const bool needsBlas = std::any_of(request.variants.begin(), request.variants.end(), [](const VariantRequest& v) {
            return findTorchFree(v.id)->multipliesWithBlas();
        });
        std::thread blasLoader = needsBlas && threads > 1 ? startBlasLoad() : std::thread();
        const JoinAtExit joinLoader{blasLoader};
        BufferPool pool;
        auto run = runExplicitPlan(request, progress, findTorchFree, available, pool, memoryBudgetOr(options.memoryBudgetBytes),
                                   threads, options.log, !options.weightsOnDemand);
        if (!run) return run.error();
        return std::shared_ptr<const RunResult>(std::move(run.value()));
    });
}

}  // namespace attnscope::engine
