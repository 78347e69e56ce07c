// `attnscope-cli run --qkv` for the torch-free variants, in the launcher itself: LibTorch (about
// half a second of loading) is never loaded for them (attnscope/torch_free_run.h).

#include "cli/cli_run_torch_free.h"

#include "cli/cli_run_steps.h"

#include <attnscope/torch_free_run.h>

namespace attnscope::cli {

using namespace attnscope::engine;

bool runsTorchFree(const RunOptions& options) {
    // (--qkv excludes --model, --attention and --image on the command line)
    return !options.qkvFile.empty() && isTorchFreeVariant(options.variant);
}

int torchFreeRunCommand(const RunOptions& options) {
    auto variant = buildVariantRequest(options);
    if (!variant) {
        printError(variant.error().message);
        return exitFor(variant.error());
    }
    RunRequest request = baseRunRequest(options);
    request.variants.push_back(std::move(variant.value()));
    if (auto added = addQkvInput(options, request); !added) {
        printError(added.error().message);
        return exitFor(added.error());
    }
    TorchFreeRunOptions runOptions;
    runOptions.threads = options.threads;
    runOptions.memoryBudgetBytes = options.memoryBudget;
    runOptions.log = printWarnings;
    runOptions.weightsOnDemand = true;  // (the run only writes its file)
    return runAndWrite(options, request, [&](const RunRequest& r, const ProgressFn& progress) {
        return runTorchFree(r, runOptions, progress);
    });
}

}  // namespace attnscope::cli
