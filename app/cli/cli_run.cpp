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
    } else {
        InputSpec input;
        if (!options.image.empty()) {
            auto spec = imageSpecFromOptions(options);
            if (!spec) {
                printError(spec.error().message);
                return exitFor(spec.error());
            }
            input.image = std::move(spec.value());
        } else {
            auto kind = parseTokenizerKind(options.tokenizer);
            if (!kind) {
                printError(kind.error().message);
                return kExitUsage;
            }
            input.tokenizer = kind.value();
            auto text = options.textFile.empty() ? Result<std::string>(options.text) : readTextFile(options.textFile);
            if (!text) {
                printError(text.error().message);
                return exitFor(text.error());
            }
            input.text = std::move(text.value());
        }
        // A model reads the text or picture (a captured attention file, the text); else random projections.
        const std::string& folder = options.image.empty() && !options.attention.empty() ? options.attention : options.model;
        if (folder.empty())
            request.source = std::move(input);
        else
            request.source = ModelLayerSource{folder, options.layer, ownAttention, {}, std::move(input)};
    }
    return runAndWrite(options, request, [&](const RunRequest& r, const ProgressFn& progress) { return (*engine)->run(r, progress); });
}

}  // namespace attnscope::cli
