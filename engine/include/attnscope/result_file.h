#pragma once
// Saving and loading RunResults as safetensors (docs/RESULT_FORMAT.md documents every name).

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace attnscope::engine {

struct ResultFileOptions {
    /// Write dense `weights` and `mask` [H, n, m] only when n, m <= denseLimit.
    std::int64_t denseLimit = 4096;
    /// Also list the pattern (`pattern.row_ptr`, `pattern.col_idx`, `pattern.reason`): refused,
    /// with nothing written, when the listing exceeds `memoryBudgetBytes`.
    bool writePattern = false;
    /// Budget of the listing; 0 = 40 % of physical memory.
    std::uint64_t memoryBudgetBytes = 0;
};

/// Writes one variant's result: `output`, the `q` and `k` it ran on, `key_padding`, `row_status`,
/// the row statistics `stats.<name>`, the draws and diagnostics `<variant>.<name>`, dense
/// `weights` + `mask` within the limit (computed head by head from the result's weights), the
/// listing on request, and the request, parameters, seed, tokens and counters as JSON text in
/// `__metadata__`. Written to a temporary file renamed into place: a failure leaves nothing.
Result<void> writeResultFile(const std::string& path, const RunResult& run, std::size_t variantIndex,
                             const ResultFileOptions& options = {});

/// The JSON text stored in __metadata__["attnscope.result"] (also used for --summary).
std::string resultSummaryJson(const RunResult& run, std::size_t variantIndex);

/// A result file read back: a RunResult holding its one AttentionResult, whose weights are
/// restored from the file's statistics, draws, q and k (tiles equal the run's), its tokens and
/// request. Tensors are read in place from the mapped file, which stays mapped while the result
/// lives. Errors name the file and the tensor or field at fault (InvalidInput, Io).
Result<std::shared_ptr<const RunResult>> readResultFile(const std::string& path);

/// True when `path` is a safetensors file whose metadata says an AttnScope run wrote it (it holds
/// `attnscope.result`); reads the header only.
bool isResultFile(const std::string& path);

}  // namespace attnscope::engine
