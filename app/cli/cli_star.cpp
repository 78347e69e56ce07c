// attnscope-cli star: the Star-Transformer's cycles on a text (Engine::runStar), written as one
// safetensors file: star.ring_weights [T, H, n, 5] (left, self, right, embedding, relay),
// star.relay_weights [T, H, n + 1] (the relay, then the satellites), star.nodes [T + 1, n, hidden],
// star.relay [T + 1, hidden], star.node_change [T, n].

#include "cli/cli_commands.h"
#include "cli/cli_progress.h"

#include <attnscope/atomic_file.h>
#include <attnscope/engine.h>
#include <attnscope/safetensors.h>
#include <attnscope/tokenize.h>

#include <charconv>
#include <iostream>
#include <unistd.h>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

/// cycles=T and cyclic=true|false; an error names the parameter.
Result<void> applyParams(const std::vector<std::string>& params, StarRequest& request) {
    for (const std::string& text : params) {
        const auto eq = text.find('=');
        const std::string name = text.substr(0, eq), value = eq == std::string::npos ? "" : text.substr(eq + 1);
        if (name == "cycles") {
            std::int64_t cycles = 0;
            const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), cycles);
            if (ec != std::errc() || end != value.data() + value.size() || cycles < 1 || cycles > 64)
                return makeError(ErrorCode::InvalidArgument, "--param cycles=" + value + ": expected a whole number from 1 to 64");
            request.cycles = cycles;
        } else if (name == "cyclic") {
            if (value != "true" && value != "false")
                return makeError(ErrorCode::InvalidArgument, "--param cyclic=" + value + ": expected true or false");
            request.cyclic = value == "true";
        } else {
            return makeError(ErrorCode::InvalidArgument, "--param '" + text + "': the star command takes cycles=T and cyclic=true|false");
        }
    }
    return {};
}

}  // namespace

int starCommand(const StarOptions& options) {
    StarRequest request;
    request.modelFolder = options.model;
    request.heads = options.heads;
    request.headDim = options.headDim;
    request.seed = options.seed;
    auto kind = parseTokenizerKind(options.tokenizer);
    if (!kind) {
        printError(kind.error().message);
        return kExitUsage;
    }
    request.tokenizer = kind.value();
    if (auto applied = applyParams(options.params, request); !applied) {
        printError(applied.error().message);
        return kExitUsage;
    }
    if (!options.model.empty() && !options.params.empty()) {
        printError("--param sets the random model; a model folder's config.json gives its cycles and ring");
        return kExitUsage;
    }
    if (!options.textFile.empty()) {
        auto text = readTextFile(options.textFile);
        if (!text) {
            printError(text.error().message);
            return kExitFailure;
        }
        request.text = std::move(text.value());
    } else {
        request.text = options.text;
    }
    if (auto usable = checkOutputPath(options.out); !usable) {
        printError(usable.error().message);
        return kExitFailure;
    }
    auto engine = createEngine(options.threads, options.memoryBudget);
    if (!engine) return kExitFailure;
    const bool showProgress = !options.quiet && isatty(STDERR_FILENO);
    auto pass = (*engine)->runStar(request, commandProgress(showProgress));
    clearProgressLine(showProgress);
    if (!pass) {
        if (pass.error().code == ErrorCode::Cancelled) return interruptedExit("the Star-Transformer run");
        printError(pass.error().message);
        return pass.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitFailure;
    }
    const StarPass& p = *pass.value();
    const std::vector<StWriteItem> items = {StWriteItem("star.ring_weights", &p.ringWeights),
                                            StWriteItem("star.relay_weights", &p.relayWeights),
                                            StWriteItem("star.nodes", &p.nodes), StWriteItem("star.relay", &p.relay),
                                            StWriteItem("star.node_change", &p.nodeChange)};
    const std::map<std::string, std::string> metadata = {
        {"cycles", std::to_string(p.cycles)}, {"cyclic", p.cyclic ? "true" : "false"},
        {"heads", std::to_string(p.heads)}, {"head_dim", std::to_string(p.headDim)},
        {"model", p.modelFolder.empty() ? "random (seed " + std::to_string(request.seed) + ")" : p.modelFolder}};
    if (auto written = writeSafetensors(options.out, items, metadata); !written) {
        printError(written.error().message);
        return kExitFailure;
    }
    if (!options.quiet)
        std::cerr << "attnscope-cli: " << p.n << " satellites, " << p.cycles << " cycles, " << p.heads << " heads ("
                  << (p.cyclic ? "closed" : "open") << " ring) written to " << options.out << "\n";
    return 0;
}

}  // namespace attnscope::cli
