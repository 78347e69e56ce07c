// `attnscope-cli run` in the engine (LibTorch): every input — text, picture, model layer, captured
// attention, explicit q, k, v — and every variant.

#include "cli/cli_commands.h"
#include "cli/cli_run_steps.h"

#include <attnscope/engine.h>
#include <attnscope/tokenize.h>

#include <iostream>
#include <optional>

namespace attnscope::cli {

using namespace attnscope::engine;

std::optional<std::unique_ptr<Engine>> createEngine(int threads, std::uint64_t memoryBudget) {
    EngineOptions engineOptions;
    engineOptions.threads = threads;
    engineOptions.memoryBudgetBytes = memoryBudget;
    // (the engine's warnings, such as a long run's time estimate, come before the work starts)
    engineOptions.log = printWarnings;
    auto engine = Engine::create(engineOptions);
    if (!engine) {
        printError(engine.error().message);
        return std::nullopt;
    }
    return std::move(engine.value());
}

int runCommand(const RunOptions& options) {
    auto engine = createEngine(options.threads, options.memoryBudget);
    if (!engine) return kExitFailure;
    RunRequest request = baseRunRequest(options);
    if (!options.variant.empty()) {
        auto variant = buildVariantRequest(options);
        if (!variant) {
            printError(variant.error().message);
            return exitFor(variant.error());
        }
        request.variants.push_back(std::move(variant.value()));
    }
    // Without --variant, --model's layer gives its own attention (the parser saw to the rest).
    const bool ownAttention = options.variant.empty();
    if (!options.qkvFile.empty()) {
        if (auto added = addQkvInput(options, request); !added) {
            printError(added.error().message);
            return exitFor(added.error());
        }
    } else if (!options.image.empty()) {
        auto spec = imageSpecFromOptions(options);
        if (!spec) {
            printError(spec.error().message);
            return exitFor(spec.error());
        }
        request.input.image = std::move(spec.value());
        if (!options.model.empty()) request.model = ModelLayerSource{options.model, options.layer, ownAttention, {}};
    } else {
        auto kind = parseTokenizerKind(options.tokenizer);
        if (!kind) {
            printError(kind.error().message);
            return kExitUsage;
        }
        request.input.tokenizer = kind.value();
        if (!options.textFile.empty()) {
            auto text = readTextFile(options.textFile);
            if (!text) {
                printError(text.error().message);
                return exitFor(text.error());
            }
            request.input.text = std::move(text.value());
        } else {
            request.input.text = options.text;
        }
        if (!options.model.empty()) request.model = ModelLayerSource{options.model, options.layer, ownAttention, {}};
        if (!options.attention.empty()) request.model = ModelLayerSource{options.attention, options.layer, ownAttention, {}};
    }
    return runAndWrite(options, request, [&](const RunRequest& r, const ProgressFn& progress) { return (*engine)->run(r, progress); });
}

}  // namespace attnscope::cli
