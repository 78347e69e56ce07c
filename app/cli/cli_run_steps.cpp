// `attnscope-cli run`, the parts that need no LibTorch: the variant and explicit q, k, v of the
// request from the flags, and the run's outputs written (both binaries; cli_run.cpp runs it in
// the engine, cli_run_torch_free.cpp in the launcher).

#include "cli/cli_commands.h"
#include "cli/cli_progress.h"
#include "cli/cli_run_steps.h"
#include "cli/qkv_file.h"

#include <attnscope/atomic_file.h>
#include <attnscope/result_file.h>
#include <attnscope/variant_catalog.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace attnscope::cli {

using namespace attnscope::engine;

void printWarnings(LogLevel level, const std::string& message) {
    if (level >= LogLevel::Warning) std::cerr << "attnscope-cli: warning: " << message << "\n";
}

int exitFor(const Error& error) {
    switch (error.code) {
    case ErrorCode::InvalidArgument: return kExitUsage;
    case ErrorCode::Cancelled: return interruptedExit("the run");
    default: return kExitFailure;
    }
}

Result<VariantRequest> buildVariantRequest(const RunOptions& options) {
    const VariantInfo* info = findVariantInfo(options.variant);
    if (!info) {
        std::string ids;
        for (const auto& v : variantCatalog()) ids += (ids.empty() ? "" : ", ") + v.id;
        return makeError(ErrorCode::InvalidArgument, "unknown variant '" + options.variant + "' (available: " + ids + ")");
    }
    VariantRequest request;
    request.id = info->id;
    for (const auto& text : options.params) {
        const auto eq = text.find('=');
        if (eq == std::string::npos || eq == 0)
            return makeError(ErrorCode::InvalidArgument, "--param '" + text + "' must look like NAME=VALUE");
        const std::string name = text.substr(0, eq);
        const ParamSpec* spec = info->findParam(name);
        if (!spec) {
            std::string known;
            for (const auto& p : info->params) known += (known.empty() ? "" : ", ") + p.name;
            return makeError(ErrorCode::InvalidArgument, "variant '" + info->id + "' has no parameter '" + name +
                                                             "' (parameters: " + (known.empty() ? "none" : known) + ")");
        }
        auto value = parseParamValue(*spec, text.substr(eq + 1));
        if (!value) return value.error();
        request.params[name] = value.value();
    }
    if (options.causal) {
        if (!info->findParam("causal"))
            return makeError(ErrorCode::InvalidArgument, "variant '" + info->id + "' has no causal mode");
        request.params["causal"] = true;
    }
    return request;
}

RunRequest baseRunRequest(const RunOptions& options) {
    RunRequest request;
    request.projection.heads = options.heads;
    request.projection.headDim = options.headDim;
    request.projection.modelDim = options.modelDim;
    request.projection.seed = options.seed;
    request.projection.qkNorm = options.qkNorm;
    request.memoryBudgetBytes = options.memoryBudget;
    request.denseLimit = options.denseLimit;
    return request;
}

Result<void> addQkvInput(const RunOptions& options, RunRequest& request) {
    auto qkv = readQkvFile(options.qkvFile);
    if (!qkv) return qkv.error();
    request.source = std::move(qkv->qkv);
    request.keyPadding = std::move(qkv->keyPadding);
    request.variantInputs = std::move(qkv->variantInputs);
    return {};
}

int runAndWrite(const RunOptions& options, const RunRequest& request, const RunFn& runner) {
    // (the outputs are checked before the run, which may take long)
    for (const std::string* path : {&options.out, &options.summary}) {
        if (path->empty() && path == &options.summary) continue;
        if (auto usable = checkOutputPath(*path); !usable) {
            printError(usable.error().message);
            return kExitFailure;
        }
    }
    const bool showProgress = !options.quiet && isatty(STDERR_FILENO);
    auto result = runner(request, commandProgress(showProgress));
    clearProgressLine(showProgress);
    if (!result) {
        if (result.error().code == ErrorCode::Cancelled) return exitFor(result.error());
        printError(result.error().message);
        return exitFor(result.error());
    }
    if (interruptSignal() != 0) return interruptedExit("the run");  // (it ended as the signal came)
    for (const auto& w : (*result)->warnings) std::cerr << "attnscope-cli: warning: " << w << "\n";

    ResultFileOptions fileOptions;
    fileOptions.denseLimit = options.denseLimit;
    fileOptions.writePattern = options.writePattern;
    fileOptions.memoryBudgetBytes = options.memoryBudget;
    const auto& shown = (*result)->results[0];
    if (!options.quiet && (shown.n > options.denseLimit || shown.m > options.denseLimit))
        std::cerr << "attnscope-cli: note: dense weights and mask not written: n = " << shown.n
                  << " exceeds the dense limit of " << options.denseLimit
                  << " tokens (the file keeps what recomputes any weight: docs/RESULT_FORMAT.md)\n";
    // Both outputs or neither: the summary is staged first and renamed into place after the result.
    std::optional<StagedFile> summary;
    if (!options.summary.empty()) {
        auto staged = StagedFile::stage(options.summary, nlohmann::json::parse(resultSummaryJson(**result, 0)).dump(2) + "\n");
        if (!staged) {
            printError(staged.error().message);
            return kExitFailure;
        }
        summary.emplace(std::move(staged.value()));
    }
    auto written = writeResultFile(options.out, **result, 0, fileOptions);
    if (!written) {
        printError(written.error().message);
        return exitFor(written.error());
    }
    if (summary) {
        if (auto committed = summary->commit(); !committed) {
            std::remove(options.out.c_str());
            printError(committed.error().message);
            return kExitFailure;
        }
    }
    return 0;
}

}  // namespace attnscope::cli
