// attnscope-cli route: MoE routing (attnscope/moe_router.h) of a file's hidden states and router,
// of its router logits, or of a text's token states under a seeded router; writes the moe.*
// tensors and, when asked, a JSON summary. Needs no LibTorch (the launcher runs it).

#include "cli/cli_app.h"
#include "cli/cli_commands.h"

#include <attnscope/atomic_file.h>
#include <attnscope/memory_budget.h>
#include <attnscope/moe_router.h>
#include <attnscope/safetensors.h>
#include <attnscope/tokenize.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <optional>
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

// A text's token states under a router drawn from the seed.
Result<PlainTensor> logitsFromText(const RouteOptions& o) {
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
    return routerLogits(randomTokenStates(tokens.value(), o.dim, o.seed), randomRouter(o.experts, o.dim, o.seed));
}

std::string summaryJson(const Routing& r, const std::string& droppedAs) {
    nlohmann::json j = {{"dropped_as", droppedAs},{"tokens", r.n},         {"experts", r.experts},   {"k", r.k},
                        {"groups", r.groups},    {"expert_capacity", r.capacity}, {"dropped", r.dropped},
                        {"aux_loss", r.auxLoss}, {"z_loss", r.zLoss},      {"expert_counts", r.expertCounts},
                        {"kept_counts", r.keptCounts}};
    return j.dump(2) + "\n";
}

Result<void> writeRouting(const std::string& path, const Routing& r, const std::string& droppedAs) {
    const PlainTensor logits = PlainTensor::fromF32({r.n, r.experts}, r.logits);
    const PlainTensor probs = PlainTensor::fromF32({r.n, r.experts}, r.probs);
    const PlainTensor expert = PlainTensor::fromI64({r.n, r.k}, r.expert);
    const PlainTensor gate = PlainTensor::fromF32({r.n, r.k}, r.gate);
    const PlainTensor position = PlainTensor::fromI64({r.n, r.k}, r.position);
    const PlainTensor kept = PlainTensor::fromU8({r.n, r.k}, r.kept);
    const PlainTensor counts = PlainTensor::fromI64({r.experts}, r.expertCounts);
    const PlainTensor keptCounts = PlainTensor::fromI64({r.experts}, r.keptCounts);
    return writeSafetensors(path,
                            {{"moe.router_logits", &logits}, {"moe.router_probs", &probs}, {"moe.expert", &expert},
                             {"moe.gate", &gate}, {"moe.position", &position}, {"moe.kept", &kept},
                             {"moe.expert_counts", &counts}, {"moe.kept_counts", &keptCounts}},
                            {{"format", "pt"}, {"attnscope.routing", summaryJson(r, droppedAs)}});
}

}  // namespace

int routeCommand(const RouteOptions& o) {
    for (const std::string* path : {&o.out, &o.summary}) {
        if (path->empty()) continue;
        if (auto usable = checkOutputPath(*path); !usable) {
            printError(usable.error().message);
            return kExitFailure;
        }
    }
    auto logits = o.input.empty() ? logitsFromText(o) : logitsFromFile(o);
    if (!logits) {
        printError(logits.error().message);
        return logits.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitFailure;
    }
    RouterOptions options;
    options.policy = o.policy;
    options.k = o.k;
    options.normalize = o.normalize;
    options.capacityFactor = o.capacityFactor;
    options.expertCapacity = o.expertCapacity;
    options.groupSize = o.groupSize;
    options.priority = o.priority;
    options.droppedAs = o.droppedAs;
    auto routing = routeTokens(logits.value(), options);
    if (!routing) {
        printError(routing.error().message);
        return kExitUsage;
    }
    // Both outputs or neither: the summary is staged, then renamed after the routing file.
    std::optional<StagedFile> summary;
    if (!o.summary.empty()) {
        auto staged = StagedFile::stage(o.summary, summaryJson(routing.value(), o.droppedAs));
        if (!staged) {
            printError(staged.error().message);
            return kExitFailure;
        }
        summary.emplace(std::move(staged.value()));
    }
    if (auto written = writeRouting(o.out, routing.value(), o.droppedAs); !written) {
        printError(written.error().message);
        return kExitFailure;
    }
    if (summary) {
        if (auto committed = summary->commit(); !committed) {
            std::remove(o.out.c_str());
            printError(committed.error().message);
            return kExitFailure;
        }
    }
    return 0;
}

}  // namespace attnscope::cli
