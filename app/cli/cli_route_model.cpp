// attnscope-cli route --model: the text run through a mixture-of-experts model folder (the
// project's `train --arch switch`, or a Switch Transformers checkpoint), and the tokens entering
// layer L's FFN routed by that layer's router — by default with the capacity, choices and rules
// (DeepSeek's scores, bias, groups, scale) the model routes with, so the routing is the model's own.

#include "cli/cli_commands.h"
#include "cli/cli_progress.h"

#include <attnscope/engine.h>

#include <algorithm>
#include <iostream>

namespace attnscope::cli {

using namespace attnscope::engine;

int routeModelCommand(const RouteOptions& o) {
    if (const int status = checkRouteOutputs(o)) return status;
    if (!o.input.empty()) {
        printError("route: --model routes the model's own token states; it takes --text or --text-file, not --input");
        return kExitUsage;
    }
    std::string text = o.text;
    if (!o.textFile.empty()) {
        auto read = readTextFile(o.textFile);
        if (!read) {
            printError(read.error().message);
            return kExitFailure;
        }
        text = std::move(read.value());
    }
    auto engine = createEngine(0, o.memoryBudget);
    if (!engine) return kExitFailure;
    auto info = (*engine)->openModel(o.model);
    if (!info) {
        printError(info.error().message);
        return kExitFailure;
    }
    for (const auto& w : info->warnings) std::cerr << "attnscope-cli: warning: " << w << "\n";
    if (info->experts == 0) {
        printError(o.model + ": a dense " + info->familyName +
                   " model has no router; route --model needs expert layers (a Switch Transformers, Mixtral, Qwen2-MoE, "
                   "OLMoE, GPT-OSS or DeepSeek checkpoint, or attnscope-cli train --arch switch)");
        return kExitFailure;
    }
    if (o.layer < 0 || o.layer >= info->layers) {
        printError("--layer " + std::to_string(o.layer) + ": the model has layers 0 … " + std::to_string(info->layers - 1));
        return kExitUsage;
    }
    if (std::find(info->expertLayers.begin(), info->expertLayers.end(), o.layer) == info->expertLayers.end()) {
        std::string layers;
        for (const std::int64_t l : info->expertLayers) layers += (layers.empty() ? "" : ", ") + std::to_string(l);
        printError("--layer " + std::to_string(o.layer) + ": that layer's FFN is dense; the expert layers are " + layers);
        return kExitUsage;
    }
    ModelInput input;
    input.text = text;
    input.keepAttention = false;
    auto pass = (*engine)->forwardModel(input, commandProgress(false));
    if (!pass) {
        if (pass.error().code == ErrorCode::Cancelled) return interruptedExit("the model's pass");
        printError(pass.error().message);
        return kExitFailure;
    }
    for (const auto& note : (*pass)->notices) std::cerr << "attnscope-cli: notice: " << note << "\n";
    RouterOptions router = routerOptionsOf(o);
    if (!o.capacityGiven) {
        router.capacityFactor = info->capacityFactor;
        router.expertCapacity = info->expertCapacity;
    }
    const auto layer = static_cast<std::size_t>(o.layer);
    if (!o.policyGiven && info->routerK > 1) {  // Mixtral: top-k, renormalised; DeepSeek: its own rules
        router.policy = kTopkPolicy;
        router.k = info->routerK;
        router.normalize = info->routerNormalize;
        router.scoring = info->routerScoring;
        router.expertGroups = info->routerGroups;
        router.keptGroups = info->routerKeptGroups;
        router.groupScore = info->routerGroupScore;
        router.gateScale = info->routerScale;
        if (layer < (*pass)->routerChoiceBias.size()) router.choiceBias = (*pass)->routerChoiceBias[layer];
    }
    // (the pass keeps router logits by layer: an expert layer's are there)
    if (layer >= (*pass)->routerLogits.size() || (*pass)->routerLogits[layer].shape.size() != 2) {
        printError("internal: the model's pass kept no router logits for its expert layer " + std::to_string(o.layer));
        return kExitFailure;
    }
    return routeAndWrite(o, (*pass)->routerLogits[layer], router, &(*pass)->input);
}

}  // namespace attnscope::cli
