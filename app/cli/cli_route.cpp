// attnscope-cli route: MoE routing (attnscope/moe_router.h) of a file's hidden states and router,
// of its router logits, or of a text's token states under a seeded router; writes the moe.*
// tensors and, when asked, a JSON summary and a CSV of the choices. Needs no LibTorch (the launcher runs it).

#include "cli/cli_app.h"
#include "cli/cli_commands.h"

#include <attnscope/atomic_file.h>
#include <attnscope/memory_budget.h>
#include <attnscope/moe_router.h>
#include <attnscope/moe_routing_file.h>
#include <attnscope/safetensors.h>
#include <attnscope/tokenize.h>

#include <fstream>
#include <iostream>
#include <vector>
#include <sstream>

namespace attnscope::cli {

using namespace attnscope::engine;

Result<std::string> readTextFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError(ErrorCode::Io, path + ": cannot open the text file");
    std::ostringstream s;
    s << in.rdbuf();
    if (in.bad()) return makeError(ErrorCode::Io, path + ": read failed");
    return s.str();
}

namespace {

// Refuses routing that would allocate more than the budget (--memory-budget, else 40 % of memory).
Result<void> checkRoutingBudget(const RouteOptions& o, std::int64_t n, std::int64_t experts, std::int64_t dim) {
    const std::uint64_t need = routingBytes(n, experts, choicesPerToken(o.policy, o.k), dim), budget = memoryBudgetOr(o.memoryBudget);
    if (need <= budget) return {};
    return makeError(ErrorCode::OutOfBudget, "routing " + std::to_string(n) + " tokens over " + std::to_string(experts) +
                                                 " experts needs " + std::to_string(need) + " bytes, over the memory budget of " +
                                                 std::to_string(budget) + " bytes: shorten the input or lower --experts or --dim");
}

// The first dimension of a 2-D tensor of the file, and its second; {-1, -1} for any other shape
// (the reader then names the problem).
std::pair<std::int64_t, std::int64_t> matrixShape(const StTensorInfo* info) {
    if (!info || info->shape.size() != 2) return {-1, -1};
    return {info->shape[0], info->shape[1]};
}

// router_logits from the file (given directly, or hidden · routerᵀ).
Result<PlainTensor> logitsFromFile(const RouteOptions& o) {
    const std::string& path = o.input;
    auto file = SafetensorsFile::open(path);
    if (!file) return file.error();
    if (const auto* given = file.value()->find("router_logits")) {
        if (const auto [n, experts] = matrixShape(given); n > 0)
            if (auto ok = checkRoutingBudget(o, n, experts, 0); !ok) return ok.error();
        auto logits = file.value()->read("router_logits");
        if (!logits) return logits.error();
        return std::move(logits.value());
    }
    if (!file.value()->find("hidden") || !file.value()->find("router"))
        return makeError(ErrorCode::InvalidInput, path + ": needs router_logits [n, E], or hidden [n, d] and router [E, d]");
    const auto [n, dim] = matrixShape(file.value()->find("hidden"));
    const auto [experts, routerDim] = matrixShape(file.value()->find("router"));
    if (n > 0 && experts > 0)
        if (auto ok = checkRoutingBudget(o, n, experts, std::max(dim, routerDim)); !ok) return ok.error();
    auto hidden = file.value()->read("hidden");
    if (!hidden) return hidden.error();
    auto router = file.value()->read("router");
    if (!router) return router.error();
    auto logits = routerLogits(hidden.value(), router.value());
    if (!logits) return makeError(logits.error().code, path + ": " + logits.error().message);
    return std::move(logits.value());
}

// A text's token states under a router drawn from the seed; `tokens` receives the tokens.
Result<PlainTensor> logitsFromText(const RouteOptions& o, TokenizedInput& tokensOut) {
    InputSpec input;
    if (!o.textFile.empty()) {
        auto text = readTextFile(o.textFile);
        if (!text) return text.error();
        input.text = std::move(text.value());
    } else {
        input.text = o.text;
    }
    auto kind = parseTokenizerKind(o.tokenizer);
    if (!kind) return kind.error();
    input.tokenizer = kind.value();
    auto tokens = tokenize(input);
    if (!tokens) return tokens.error();
    if (tokens->tokens.empty()) return makeError(ErrorCode::InvalidInput, "the text has no tokens: type or paste some text");
    if (auto ok = checkRoutingBudget(o, static_cast<std::int64_t>(tokens->tokens.size()), o.experts, o.dim); !ok)
        return ok.error();
    tokensOut = std::move(tokens.value());
    return routerLogits(randomTokenStates(tokensOut, o.dim, o.seed), randomRouter(o.experts, o.dim, o.seed));
}

}  // namespace

RouterOptions routerOptionsOf(const RouteOptions& o) {
    RouterOptions options;
    options.policy = o.policy;
    options.k = o.k;
    options.normalize = o.normalize;
    options.capacityFactor = o.capacityFactor;
    options.expertCapacity = o.expertCapacity;
    options.groupSize = o.groupSize;
    options.priority = o.priority;
    options.droppedAs = o.droppedAs;
    return options;
}

// Refuses an output path that cannot be written before any work is spent.
int checkRouteOutputs(const RouteOptions& o) {
    for (const std::string* path : {&o.out, &o.summary, &o.csv}) {
        if (path->empty()) continue;
        if (auto usable = checkOutputPath(*path); !usable) {
            printError(usable.error().message);
            return kExitFailure;
        }
    }
    return 0;
}

int routeAndWrite(const RouteOptions& o, const PlainTensor& logits, const RouterOptions& router, const TokenizedInput* tokens) {
    auto routing = routeTokens(logits, router);
    if (!routing) {
        printError(routing.error().message);
        return kExitUsage;
    }
    // Every output or none: the summary and the CSV are staged, then renamed after the routing file.
    std::vector<std::pair<StagedFile, const std::string*>> staged;
    const std::pair<const std::string*, std::string> extras[] = {
        {&o.summary, o.summary.empty() ? std::string() : routingSummaryJson(routing.value(), o.droppedAs)},
        {&o.csv, o.csv.empty() ? std::string() : routingCsv(routing.value(), tokens)}};
    for (const auto& [path, contents] : extras) {
        if (path->empty()) continue;
        auto file = StagedFile::stage(*path, contents);
        if (!file) {
            printError(file.error().message);
            return kExitFailure;
        }
        staged.emplace_back(std::move(file.value()), path);
    }
    if (auto written = writeRoutingFile(o.out, routing.value(), o.droppedAs); !written) {
        printError(written.error().message);
        return kExitFailure;
    }
    std::vector<const std::string*> written{&o.out};
    for (auto& [file, path] : staged) {
        if (auto committed = file.commit(); !committed) {
            for (const std::string* done : written) std::remove(done->c_str());
            printError(committed.error().message);
            return kExitFailure;
        }
        written.push_back(path);
    }
    return 0;
}

int routeCommand(const RouteOptions& o) {
    if (const int status = checkRouteOutputs(o)) return status;
    TokenizedInput tokens;  // (text input only: the CSV's text column)
    auto logits = o.input.empty() ? logitsFromText(o, tokens) : logitsFromFile(o);
    if (!logits) {
        printError(logits.error().message);
        return logits.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitFailure;
    }
    return routeAndWrite(o, logits.value(), routerOptionsOf(o), o.input.empty() ? &tokens : nullptr);
}

}  // namespace attnscope::cli
