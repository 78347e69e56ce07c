// attnscope-cli context: exBERT's context search. The corpus is indexed with the model once (kept
// beside it for the next time), the text is run through the model, and the corpus tokens nearest
// the chosen token at the layer are printed as JSON with their contexts and what each looked at.

#include "cli/cli_commands.h"
#include "cli/cli_progress.h"
#include "cli/cli_run_steps.h"

#include <attnscope/context_search.h>
#include <attnscope/engine.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <unistd.h>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

Result<std::string> textOf(const ContextOptions& options) {
    if (options.textFile.empty()) return options.text;
    return readTextFile(options.textFile);
}

nlohmann::json matchJson(const ContextMatch& match) {
    nlohmann::json out{{"token", match.token}, {"cosine", match.cosine}, {"before", match.before},
                       {"text", match.text},   {"after", match.after}};
    if (match.peek.key >= 0) out["looked_at"] = {{"token", match.peek.key}, {"text", match.peekText}, {"weight", match.peek.weight}};
    return out;
}

}  // namespace

int contextCommand(const ContextOptions& options) {
    auto corpus = readTextFile(options.corpus);
    auto text = textOf(options);
    for (const auto* read : {&corpus, &text}) {
        if (!*read) {
            printError(read->error().message);
            return kExitFailure;
        }
    }
    auto engine = createEngine(options.threads, options.memoryBudget);
    if (!engine) return kExitFailure;
    auto model = (*engine)->openModel(options.model);
    if (!model) {
        printError(model.error().message);
        return exitFor(model.error());
    }
    if (options.layer >= model->layers || (options.head >= 0 && options.head >= model->heads)) {
        printError(options.layer >= model->layers
                       ? "--layer " + std::to_string(options.layer) + " is outside the model's " + std::to_string(model->layers) + " layers"
                       : "--head " + std::to_string(options.head) + " is outside the model's " + std::to_string(model->heads) + " heads");
        return kExitUsage;
    }
    const bool showProgress = !options.quiet && isatty(STDERR_FILENO);
    const auto forward = [&](const ModelInput& input) { return (*engine)->forwardModel(input); };
    ContextIndexOptions indexOptions;
    indexOptions.space = *parseContextSpace(options.space);
    indexOptions.memoryBudgetBytes = options.indexBudget;
    auto kept = keptOrBuiltContextIndex(*corpus, *model, indexOptions, forward, commandProgress(showProgress), options.rebuild);
    clearProgressLine(showProgress);
    if (!kept) {
        if (kept.error().code == ErrorCode::Cancelled) return interruptedExit("indexing the corpus");
        printError(kept.error().message);
        return exitFor(kept.error());
    }
    for (const auto& note : kept->notices) std::cerr << "attnscope-cli: notice: " << note << "\n";
    for (const auto& note : kept->index->notices) std::cerr << "attnscope-cli: notice: " << note << "\n";

    ModelInput input;
    input.text = *text;
    input.keepAttention = false;
    auto pass = (*engine)->forwardModel(input);
    if (!pass) {
        printError(pass.error().message);
        return exitFor(pass.error());
    }
    auto vector = contextVector(**pass, indexOptions.space, options.layer, options.token);
    if (!vector) {
        printError(vector.error().message);
        return kExitUsage;
    }
    ContextQuery query;
    query.layer = options.layer;
    if (options.head >= 0) query.head = options.head;
    query.top = options.top;
    query.contextBytes = options.contextBytes;
    auto matches = searchContext(*kept->index, *vector, query);
    if (!matches) {
        printError(matches.error().message);
        return kExitUsage;
    }
    nlohmann::json list = nlohmann::json::array();
    for (const ContextMatch& match : *matches) list.push_back(matchJson(match));
    const Token& token = (*pass)->input.tokens[static_cast<std::size_t>(options.token)];
    const nlohmann::json out{{"token", {{"index", options.token}, {"text", token.text}}},
                             {"layer", options.layer},
                             {"space", options.space},
                             {"head", options.head >= 0 ? nlohmann::json(options.head) : nlohmann::json(nullptr)},
                             {"index", {{"path", kept->path}, {"reused", kept->reused}, {"tokens", kept->index->size()},
                                        {"bytes", kept->index->bytes()}, {"indexed_bytes", kept->index->indexedBytes},
                                        {"corpus_bytes", kept->index->corpus.size()}}},
                             {"matches", list}};
    std::cout << out.dump() << '\n';
    return 0;
}

}  // namespace attnscope::cli
