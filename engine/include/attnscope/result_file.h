#pragma once
// Saving and loading RunResults as safetensors (docs/RESULT_FORMAT.md documents every name).

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <string>

namespace attnscope::engine {

struct ResultFileOptions {
    /// Write `weights` and `mask` [H, n, n] only when n <= denseLimit.
    std::int64_t denseLimit = 4096;
};

/// Writes one variant's result: `output`, `weights` + `mask` (dense, within the limit),
/// `pattern.row_ptr` / `pattern.col_idx` / `pattern.reason`, `<variant>.<diagnostic>`, and the
/// request, parameters, seed, tokens and counters as JSON text in `__metadata__`.
Result<void> writeResultFile(const std::string& path, const RunResult& run, std::size_t variantIndex,
                             const ResultFileOptions& options = {});

/// The JSON text stored in __metadata__["attnscope.result"] (also used for --summary).
std::string resultSummaryJson(const RunResult& run, std::size_t variantIndex);

}  // namespace attnscope::engine
