#pragma once
// The steps of `attnscope-cli run` that need no LibTorch (cli_run_steps.cpp): both the engine's
// run command (cli_run.cpp) and the launcher's torch-free one (cli_run_torch_free.cpp) use them.

#include "cli/cli_commands.h"

#include <attnscope/log.h>
#include <attnscope/progress.h>
#include <attnscope/result.h>
#include <attnscope/types.h>

#include <functional>
#include <memory>
#include <string>

namespace attnscope::cli {

/// The exit status for an error: usage (2) for invalid arguments, 130/143 when cancelled, else 1.
int exitFor(const engine::Error& error);

/// --variant, --param and --causal checked against the variant's schema.
engine::Result<engine::VariantRequest> buildVariantRequest(const RunOptions& options);

/// The request with its projection, budget and dense limit from the flags (no variant, no input yet).
engine::RunRequest baseRunRequest(const RunOptions& options);

/// --qkv's q, k, v (read in place), key padding and the variants' inputs, into the request.
engine::Result<void> addQkvInput(const RunOptions& options, engine::RunRequest& request);

/// Prints warnings (and worse) as "attnscope-cli: warning: ..." on stderr.
void printWarnings(engine::LogLevel level, const std::string& message);

using RunFn = std::function<engine::Result<std::shared_ptr<const engine::RunResult>>(const engine::RunRequest&,
                                                                                      const engine::ProgressFn&)>;

/// Checks --out and --summary, runs the request through `runner` with progress on a terminal,
/// and writes the result (and the summary) — both or neither. Returns the exit status.
int runAndWrite(const RunOptions& options, const engine::RunRequest& request, const RunFn& runner);

}  // namespace attnscope::cli
