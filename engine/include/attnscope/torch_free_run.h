#pragma once
// Runs of explicit q, k, v (every variant's run is plain C++) in the calling process: the launcher
// (`attnscope-cli run --qkv`) answers them without loading LibTorch (some 290 shared libraries,
// about half a second), through the same steps and variant code as Engine::run.

#include <attnscope/log.h>
#include <attnscope/progress.h>
#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace attnscope::engine {

struct TorchFreeRunOptions {
    int threads = 0;                     ///< the kernels' threads; 0 = every core
    std::uint64_t memoryBudgetBytes = 0;  ///< default budget of a request; 0 = memoryBudgetOr(0)
    LogFn log;                           ///< warnings before the work (a long run's estimate)
    /// The caller only writes the result file: the results come without weights, and
    /// writeResultFile makes them only for what it writes from them (dense weights, the listed
    /// pattern). Copying the kept state into a variant's weights costs a fresh-memory copy of it:
    /// about 45 ms of a 0.4 s Linformer or Routing run at 16k tokens.
    bool weightsOnDemand = false;
};

/// Whether `variantId`'s run is torch-free: every registered variant's is (an unknown id is not).
bool isTorchFreeVariant(const std::string& variantId);

/// Whether runTorchFree can run the request: explicit q, k, v as its source (QkvTensors or SharedQkv), and
/// every variant torch-free.
bool canRunTorchFree(const RunRequest& request);

/// Runs such a request (errors as Engine::run's; a request canRunTorchFree refuses is an
/// InvalidArgument error). Never throws.
Result<std::shared_ptr<const RunResult>> runTorchFree(const RunRequest& request, const TorchFreeRunOptions& options,
                                                      const ProgressFn& progress = {});

}  // namespace attnscope::engine
