// attnscope-cli train: a small model trained with a chosen attention variant, written as a model
// folder that `run --model` and `analyze` (and the GUI) open.

#include "cli/cli_commands.h"
#include "cli/cli_progress.h"

#include <attnscope/engine.h>
#include <attnscope/variant_catalog.h>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace attnscope::cli {

using namespace attnscope::engine;

int trainCommand(const TrainCliOptions& options) {
    auto engine = createEngine(options.threads, options.memoryBudget);
    if (!engine) return kExitFailure;
    TrainOptions train;
    train.arch = options.arch;
    train.segment = options.segment;
    train.memory = options.memory;
    train.task = options.arch == "transfo-xl" && options.task == "copy"         ? "text"
                 : options.arch == "star-transformer" && options.task == "copy" ? "first"
                                                                                 : options.task;
    train.starRelay = !options.noRelay;
    train.experts = options.experts;
    train.capacityFactor = options.capacityFactor;
    train.auxLossCoef = options.auxLossCoef;
    train.zLossCoef = options.zLossCoef;
    train.variant = options.variant.empty() ? exactReference().id : options.variant;
    train.layers = options.layers;
    train.heads = options.heads;
    train.dim = options.dim;
    train.steps = options.steps;
    train.batch = options.batch;
    train.length = options.length;
    train.learningRate = options.learningRate;
    train.seed = options.seed;
    train.out = options.out;
    if (!options.textFile.empty()) {
        auto read = readTextFile(options.textFile);
        if (!read) {
            printError(read.error().message);
            return kExitFailure;
        }
        train.text = std::move(read.value());
    } else if (train.task == "text") {
        printError(options.arch == "transfo-xl" ? "--arch transfo-xl trains on a text: give --text-file"
                                                : "task 'text' needs --text-file");
        return kExitUsage;
    }
    const VariantInfo* info = findVariantInfo(train.variant);
    if (!info) {
        printError("unknown variant '" + train.variant + "'");
        return kExitUsage;
    }
    for (const auto& text : options.params) {
        const auto eq = text.find('=');
        const ParamSpec* spec = eq == std::string::npos ? nullptr : info->findParam(text.substr(0, eq));
        if (!spec) {
            printError("--param '" + text + "' is not NAME=VALUE of a parameter of " + info->id);
            return kExitUsage;
        }
        auto value = parseParamValue(*spec, text.substr(eq + 1));
        if (!value) {
            printError(value.error().message);
            return kExitUsage;
        }
        train.params[spec->name] = value.value();
    }
    auto report = (*engine)->train(
        train,
        [&](const TrainLogEntry& e) {
            if (!options.quiet)
                std::cerr << "step " << e.step << "/" << options.steps << "  loss " << std::fixed << std::setprecision(4)
                          << e.loss << "  accuracy " << std::setprecision(3) << e.accuracy << "\n";
        },
        commandProgress(false));  // (the log lines are its progress; Ctrl-C stops between steps)
    if (!report) {
        if (report.error().code == ErrorCode::Cancelled) return interruptedExit("training");
        printError(report.error().message);
        return report.error().code == ErrorCode::InvalidArgument || report.error().code == ErrorCode::Unsupported
                   ? kExitUsage
                   : kExitFailure;
    }
    if (!options.quiet)
        std::cerr << "attnscope-cli: " << report->parameters << " parameters, " << report->sequenceLength
                  << " tokens per example, " << report->seconds << " s; chance accuracy " << report->chanceAccuracy
                  << "; model written to " << report->folder << "\n";
    return 0;
}

}  // namespace attnscope::cli
