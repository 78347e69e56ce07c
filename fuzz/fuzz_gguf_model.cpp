// A GGUF file opened as a model, as File ▸ Open GGUF Model and `--model FILE.gguf` open it: the
// metadata read as its family's config, every tensor the forward needs found and checked, each
// read as float32 and as the rows generation multiplies, then the file's tokenizer built and used.
#include "io/checkpoint/gguf_file.h"
#include "io/checkpoint/stored_matvec.h"
#include "fuzz_files.h"
#include "fuzz_tokenizer_common.h"
#include "io/tokenize/gguf_tokenizer.h"

#include <attnscope/model_checkpoint.h>

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ScratchFolder scratch;
    scratch.clear();
    const std::string path = scratch.write("model.gguf", std::string(reinterpret_cast<const char*>(data), size));
    auto checkpoint = attnscope::engine::ModelCheckpoint::open(path);
    if (!checkpoint) return 0;
    const auto& model = *checkpoint.value();
    for (const auto& expected : attnscope::engine::expectedTensors(model.config())) {
        (void)model.readF32(expected.name);
        auto rows = model.storedMatrix(expected.name);
        if (!rows || rows.value().rows * rows.value().cols > (1 << 20)) continue;
        std::vector<float> x(static_cast<std::size_t>(rows.value().cols), 0.5f), y(static_cast<std::size_t>(rows.value().rows));
        attnscope::engine::storedMatMul(rows.value(), x.data(), 1, y.data());
    }
    if (const auto* gguf = model.gguf()) {
        auto tokenizer = attnscope::engine::makeGgufTokenizer(gguf->header(), path);
        if (tokenizer) exerciseTokenizer(tokenizer.value());
    }
    return 0;
}
