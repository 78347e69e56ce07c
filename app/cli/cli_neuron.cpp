// `attnscope-cli neuron`: BertViz's neuron view as JSON, read back from a result file alone
// (attnscope/neuron_terms.h): one head's query vector, each key vector, their elementwise products,
// the dot, the variant's scale and terms, the score and the result's own weight.

#include "cli/cli_commands.h"

#include <attnscope/neuron_terms.h>
#include <attnscope/result_file.h>

#include <nlohmann/json.hpp>

#include <iostream>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

nlohmann::json keyJson(const NeuronKey& key) {
    nlohmann::json terms = nlohmann::json::object();
    for (const auto& [name, value] : key.terms) terms[name] = value;
    nlohmann::json out{{"index", key.index}, {"allowed", key.allowed}, {"key", key.key},      {"product", key.product}, {"dot", key.dot},
                       {"scaled", key.scaled}, {"terms", terms},        {"score", key.score}, {"weight", key.weight}};
    if (!key.keyBeforeRotation.empty()) {  // a rotary layer: the same with positions removed
        out["key_before_rotation"] = key.keyBeforeRotation;
        out["product_before_rotation"] = key.productBeforeRotation;
        out["dot_before_rotation"] = key.dotBeforeRotation;
    }
    return out;
}

}  // namespace

int neuronCommand(const NeuronOptions& options) {
    auto run = readResultFile(options.file);
    if (!run) {
        printError(run.error().message);
        return kExitFailure;
    }
    return printNeuronTerms(**run, options);
}

int printNeuronTerms(const RunResult& run, const NeuronOptions& options) {
    if (options.result < 0 || options.result >= static_cast<int>(run.results.size())) {
        printError("--result " + std::to_string(options.result) + ": the run holds " + std::to_string(run.results.size()) + " results");
        return kExitUsage;
    }
    const AttentionResult& r = run.results[static_cast<std::size_t>(options.result)];
    std::int64_t k0 = 0, k1 = 0;
    if (!parseIndexRange(options.keys, r.m, k0, k1)) {
        printError("--keys '" + options.keys + "' must look like C:D (keys C to D-1) or C");
        return kExitUsage;
    }
    auto terms = neuronTerms(run, static_cast<std::size_t>(options.result), options.head, options.query, k0, k1);
    if (!terms) {
        printError(terms.error().message);
        return kExitUsage;
    }
    nlohmann::json keys = nlohmann::json::array();
    for (const NeuronKey& key : terms->keys) keys.push_back(keyJson(key));
    nlohmann::json out{{"variant", terms->variantId}, {"head", terms->head},     {"query", terms->query},
                             {"scale", terms->scale},       {"softcap", terms->softcap}, {"query_vector", terms->queryVector},
                             {"keys", keys}};
    if (terms->hasRotation()) out["query_vector_before_rotation"] = terms->queryBeforeRotation;
    std::cout << out.dump() << '\n';
    return 0;
}

}  // namespace attnscope::cli
