// attnscope-cli analyze: the head atlas of a checkpoint on a text, written as JSON.

#include "cli/cli_commands.h"
#include "cli/cli_progress.h"

#include <attnscope/atomic_file.h>
#include <attnscope/engine.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

Result<std::vector<CoverageSetting>> parseSettings(const std::vector<std::string>& specs) {
    std::vector<CoverageSetting> out;
    for (const auto& spec : specs) {
        auto setting = parseCoverageSetting(spec);
        if (!setting) return makeError(ErrorCode::InvalidArgument, "--coverage " + setting.error().message);
        out.push_back(std::move(setting.value()));
    }
    return out;
}

}  // namespace

int analyzeCommand(const AnalyzeOptions& options) {
    if (auto usable = checkOutputPath(options.out); !usable) {  // (before the atlas, which takes long)
        printError(usable.error().message);
        return kExitFailure;
    }
    std::string text = options.text;
    if (!options.textFile.empty()) {
        auto read = readTextFile(options.textFile);
        if (!read) {
            printError(read.error().message);
            return kExitFailure;
        }
        text = std::move(read.value());
    }
    auto engine = createEngine(options.threads, options.memoryBudget);
    if (!engine) return kExitFailure;
    auto settings = parseSettings(options.coverage);
    if (!settings) {
        printError(settings.error().message);
        return kExitUsage;
    }
    auto info = (*engine)->openModel(options.model);
    if (!info) {
        printError(info.error().message);
        return kExitFailure;
    }
    for (const auto& w : info->warnings) std::cerr << "attnscope-cli: warning: " << w << "\n";

    const bool showProgress = !options.quiet && isatty(STDERR_FILENO);
    AtlasRequest request;
    request.text = text;
    if (!options.image.empty()) {
        auto picture = pictureSpec(options.image);
        if (!picture) {
            printError(picture.error().message);
            return kExitFailure;
        }
        request.image = std::move(picture.value());
        request.imageOptions.fusion = headFusionFromName(options.headFusion).value_or(HeadFusion::Mean);
        request.imageOptions.discardRatio = options.discardRatio;
        request.imageOptions.massShare = options.massShare;
        request.imageOptions.flow = !options.noFlow;
    }
    request.settings = std::move(settings.value());
    auto atlas = (*engine)->analyzeModel(request, commandProgress(showProgress));
    clearProgressLine(showProgress);
    if (!atlas) {
        if (atlas.error().code == ErrorCode::Cancelled) return interruptedExit("the analysis");
        printError(atlas.error().message);
        return kExitFailure;
    }
    if (interruptSignal() != 0) return interruptedExit("the analysis");
    for (const auto& note : (*atlas)->notices) std::cerr << "attnscope-cli: notice: " << note << "\n";
    if (const auto written = writeFileAtomically(options.out, headAtlasJson(**atlas) + "\n"); !written) {
        printError(written.error().message);
        return kExitFailure;
    }
    if (!options.quiet)
        std::cerr << "attnscope-cli: atlas of " << (*atlas)->layers << " x " << (*atlas)->heads << " heads on "
                  << (*atlas)->n << " tokens in " << (*atlas)->seconds << " s -> " << options.out << "\n";
    return 0;
}

}  // namespace attnscope::cli
