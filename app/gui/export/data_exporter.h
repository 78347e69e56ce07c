#pragma once
// The data behind a figure: the whole result as safetensors (the engine's writer, documented in
// docs/RESULT_FORMAT.md) or one head's n x m weights as CSV. Explicit paths, no dialogs; an
// empty returned string means success, otherwise it is a plain-text message naming the file.

#include <attnscope/types.h>

#include <QString>

#include <cstddef>

namespace attnscope::app {

class DataExporter {
public:
    /// Rows of the CSV are built this many at a time, so a 16384-token head never needs its
    /// dense matrix in memory at once.
    static constexpr int kCsvChunkRows = 256;

    /// run.results[variantIndex] with the request, seed and tokens (engine::writeResultFile).
    static QString exportSafetensors(const QString& path, const engine::RunResult& run, std::size_t variantIndex);
    /// The weights of `head` as a labelled matrix: a header line `query \ key,"0:The","1:cat",…`,
    /// then n lines `"i:token",w_i0,…,w_i(m-1)` (0 outside the pattern, as
    /// AttentionResult::weightAt), each weight with 9 significant digits so it reads back as the
    /// same float. Labels are "index:token" (quoted, quotes doubled; a key or query without a
    /// token, such as Transformer-XL's memory, is its index alone) (docs/RESULT_FORMAT.md).
    static QString exportHeadCsv(const QString& path, const engine::AttentionResult& result, int head,
                                 const std::vector<engine::Token>& tokens = {});
};

}  // namespace attnscope::app
