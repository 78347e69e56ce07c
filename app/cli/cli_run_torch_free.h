#pragma once
// The launcher's own `run` (cli_run_torch_free.cpp): explicit q, k, v and a torch-free variant.

#include "cli/cli_commands.h"

namespace attnscope::cli {

/// --qkv with a torch-free variant.
bool runsTorchFree(const RunOptions& options);

/// Runs it without LibTorch; the same request, result file and messages as the engine's run.
int torchFreeRunCommand(const RunOptions& options);

}  // namespace attnscope::cli
