// attnscope-cli neuron --model: the neuron view of a model layer's own attention on a text — the
// layer run as `run --model --layer` runs it (its window, bias, rotary positions, causality), then
// the same JSON as a result file gives.

#include "cli/cli_commands.h"
#include "cli/cli_progress.h"
#include "cli/cli_run_steps.h"

#include <attnscope/engine.h>

#include <unistd.h>

namespace attnscope::cli {

using namespace attnscope::engine;

int neuronModelCommand(const NeuronOptions& options) {
    std::string text = options.text;
    if (!options.textFile.empty()) {
        auto read = readTextFile(options.textFile);
        if (!read) {
            printError(read.error().message);
            return kExitFailure;
        }
        text = std::move(read.value());
    }
    auto engine = createEngine(options.threads, 0);
    if (!engine) return kExitFailure;
    RunRequest request;
    request.source = ModelLayerSource{options.model, options.layer, true, {}, InputSpec{text}};
    const bool showProgress = isatty(STDERR_FILENO);
    auto run = (*engine)->run(request, commandProgress(showProgress));
    clearProgressLine(showProgress);
    if (!run) {
        if (run.error().code == ErrorCode::Cancelled) return interruptedExit("the model's pass");
        printError(run.error().message);
        return exitFor(run.error());
    }
    return printNeuronTerms(**run, options);
}

}  // namespace attnscope::cli
