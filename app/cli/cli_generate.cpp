// attnscope-cli generate: text from a model (a folder or a GGUF file) after a prompt — greedy or
// seeded sampling with a key/value cache — the tokens printed as they come, then the model's own
// attention of the whole sequence (prompt and generated tokens) written for every layer, so `tile`
// and the window read what the model looked at while it wrote each token.

#include "cli/cli_commands.h"
#include "cli/cli_progress.h"
#include "cli/cli_run_steps.h"

#include <attnscope/atomic_file.h>
#include <attnscope/engine.h>
#include <attnscope/result_file.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

// "out/r.safetensors", layer 3 → "out/r.layer3.safetensors"
std::string layerFile(const std::string& out, std::int64_t layer) {
    const std::string suffix = ".safetensors";
    const bool ends = out.size() > suffix.size() && out.compare(out.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string stem = ends ? out.substr(0, out.size() - suffix.size()) : out;
    return stem + ".layer" + std::to_string(layer) + suffix;
}

// The layer's own attention of the sequence the model wrote (its ids, not the decoded text re-read).
Result<std::shared_ptr<const RunResult>> layerRun(Engine& engine, const GenerateOptions& options, const std::vector<std::int64_t>& ids,
                                                 std::int64_t layer, bool showProgress) {
    RunRequest request;
    request.source = ModelLayerSource{options.model, static_cast<int>(layer), true, ids, {}};
    return engine.run(request, commandProgress(showProgress));
}

nlohmann::json summaryJson(const GenerateResult& g, const std::vector<std::string>& files, double openSeconds) {
    return nlohmann::json{{"prompt", g.prompt},
                          {"open_seconds", openSeconds},
                          {"prompt_ids", g.promptIds},
                          {"generated_ids", g.generatedIds},
                          {"text", g.generatedText},
                          {"stopped_at_eos", g.stoppedAtEos},
                          {"prompt_seconds", g.promptSeconds},
                          {"generate_seconds", g.generateSeconds},
                          {"tokens_per_second", g.generateSeconds > 0 ? static_cast<double>(g.generatedIds.size()) / g.generateSeconds : 0.0},
                          {"files", files}};
}

}  // namespace

int generateCommand(const GenerateOptions& options) {
    for (const std::string* path : {&options.out, &options.summary}) {  // before the work, which takes long
        if (path->empty()) continue;
        if (auto usable = checkOutputPath(*path); !usable) {
            printError(usable.error().message);
            return kExitFailure;
        }
    }
    GenerateRequest request;
    request.prompt = options.prompt;
    if (!options.promptFile.empty()) {
        auto read = readTextFile(options.promptFile);
        if (!read) {
            printError(read.error().message);
            return kExitFailure;
        }
        request.prompt = std::move(read.value());
    }
    request.maxNewTokens = options.maxNewTokens;
    request.temperature = options.temperature;
    request.topK = options.topK;
    request.seed = options.seed;
    auto engine = createEngine(options.threads, options.memoryBudget);
    if (!engine) return kExitFailure;
    const auto opening = std::chrono::steady_clock::now();
    auto info = (*engine)->openModel(options.model);
    const double openSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - opening).count();
    if (!info) {
        printError(info.error().message);
        return exitFor(info.error());
    }
    if (options.layer >= info->layers) {
        printError("--layer " + std::to_string(options.layer) + " is outside the model's " + std::to_string(info->layers) + " layers");
        return kExitUsage;
    }
    for (const auto& w : info->warnings) std::cerr << "attnscope-cli: warning: " << w << "\n";

    const bool showProgress = !options.quiet && isatty(STDERR_FILENO);
    auto generated = (*engine)->generate(
        request,
        [](const GeneratedToken& token) {
            std::cout << token.text << std::flush;  // the text as it is written
            return interruptSignal() == 0;
        },
        commandProgress(false));
    std::cout << std::endl;
    if (!generated) {
        if (generated.error().code == ErrorCode::Cancelled) return interruptedExit("the generation");
        printError(generated.error().message);
        return exitFor(generated.error());
    }
    if (interruptSignal() != 0) return interruptedExit("the generation");
    const GenerateResult& g = generated.value();
    for (const auto& note : g.notices) std::cerr << "attnscope-cli: notice: " << note << "\n";
    if (!options.quiet)
        std::cerr << "attnscope-cli: " << g.generatedIds.size() << " tokens in " << g.generateSeconds << " s after the prompt's "
                  << g.promptIds.size() << " tokens in " << g.promptSeconds << " s" << (g.stoppedAtEos ? " (end of text)" : "") << "\n";

    // every layer's own attention of the whole sequence: one forward pass, then a file per layer
    std::vector<std::int64_t> ids = g.promptIds;
    ids.insert(ids.end(), g.generatedIds.begin(), g.generatedIds.end());
    std::vector<std::string> files;
    for (std::int64_t layer = -1; layer < info->layers; ++layer) {
        const std::int64_t shown = layer < 0 ? options.layer : layer;
        auto run = layerRun(**engine, options, ids, shown, showProgress);
        clearProgressLine(showProgress);
        if (!run) {
            if (run.error().code == ErrorCode::Cancelled) return interruptedExit("writing the attention");
            printError(run.error().message);
            return exitFor(run.error());
        }
        const std::string path = layer < 0 ? options.out : layerFile(options.out, layer);
        if (auto written = writeResultFile(path, **run, 0); !written) {
            printError(written.error().message);
            return exitFor(written.error());
        }
        files.push_back(path);
    }
    if (!options.summary.empty()) {
        if (auto written = writeFileAtomically(options.summary, summaryJson(g, files, openSeconds).dump(2) + "\n"); !written) {
            printError(written.error().message);
            return kExitFailure;
        }
    }
    return 0;
}

}  // namespace attnscope::cli
