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
    /// n lines of m comma-separated weights of `head` (query i on line i, key j in column j; 0
    /// outside the pattern, as AttentionResult::weightAt), each with 9 significant digits so it
    /// reads back as the same float. No header line.
    static QString exportHeadCsv(const QString& path, const engine::AttentionResult& result, int head);
};

}  // namespace attnscope::app
