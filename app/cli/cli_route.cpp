// attnscope-cli route: MoE routing (attnscope/moe_router.h) of a file's hidden states and router,
// of its router logits, or of a text's token states under a seeded router; writes the moe.*
// tensors and, when asked, a JSON summary. Needs no LibTorch (the launcher runs it).

#include "cli/cli_app.h"
#include "cli/cli_commands.h"

#include <attnscope/atomic_file.h>
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

// router_logits from the file (given directly, or hidden · routerᵀ).
Result<PlainTensor> logitsFromFile(const std::string& path) {
    auto file = SafetensorsFile::open(path);
    if (!file) return file.error();
    if (file.value()->find("router_logits")) {
        auto logits = file.value()->read("router_logits");
        if (!logits) return logits.error();
        return std::move(logits.value());
    }
    if (!file.value()->find("hidden") || !file.value()->find("router"))
        return makeError(ErrorCode::InvalidInput, path + ": needs router_logits [n, E], or hidden [n, d] and router [E, d]");
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
    auto logits = o.input.empty() ? logitsFromText(o) : logitsFromFile(o.input);
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
