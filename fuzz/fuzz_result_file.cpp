// A result file read back (`attnscope` opening a saved result, `attnscope-cli` reading one), then
// the weights it restores: tiles, row visits and single entries of every head.
#include "fuzz_files.h"

#include <attnscope/attention_weights.h>
#include <attnscope/result_file.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ScratchFolder scratch;
    const std::string path = scratch.write("result.safetensors", std::string(reinterpret_cast<const char*>(data), size));
    auto read = attnscope::engine::readResultFile(path);
    if (!read) return 0;
    for (const auto& result : read.value()->results) {
        if (!result.weights) continue;
        const auto& w = *result.weights;
        const std::int64_t rows = std::min<std::int64_t>(w.queries(), 16), keys = std::min<std::int64_t>(w.keys(), 16);
        for (int head = 0; head < std::min<std::int64_t>(w.heads(), 4); ++head) {
            (void)w.tile(head, 0, rows, 0, keys, true);
            (void)w.forEachRow(head, 0, rows, [](const attnscope::engine::RowEntries&) { return true; });
            (void)w.weightAt(head, rows - 1, keys - 1);
            (void)w.entries(head);
        }
    }
    return 0;
}
