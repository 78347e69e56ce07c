// A model folder built from fuzzed files: config.json, the weights (one file, or an index and two
// shards) and the tokenizer, opened as File → Open Model and `--model DIR` open it, then every
// weight read as float32 and the tokenizer loaded and used.
//
// Parts (fuzz_files.h), each absent when the input has fewer:
//   0 config.json
//   1 model.safetensors, or model.safetensors.index.json when it starts with '{'
//   2 model-00001-of-00002.safetensors
//   3 model-00002-of-00002.safetensors
//   4 tokenizer.json when it starts with '{', else vocab.txt
//   5 merges.txt (then part 4 is vocab.json)
#include "fuzz_files.h"
#include "fuzz_tokenizer_common.h"

#include <attnscope/model_checkpoint.h>

#include <cstddef>
#include <cstdint>

namespace {

void writeFolder(const ScratchFolder& scratch, const std::vector<std::string>& parts) {
    auto part = [&](std::size_t i) -> const std::string* { return i < parts.size() ? &parts[i] : nullptr; };
    scratch.write("config.json", parts[0]);
    if (const auto* weights = part(1))
        scratch.write(!weights->empty() && (*weights)[0] == '{' ? "model.safetensors.index.json" : "model.safetensors",
                      *weights);
    if (const auto* shard = part(2)) scratch.write("model-00001-of-00002.safetensors", *shard);
    if (const auto* shard = part(3)) scratch.write("model-00002-of-00002.safetensors", *shard);
    const auto* merges = part(5);
    if (const auto* tokenizer = part(4)) {
        const bool json = !tokenizer->empty() && (*tokenizer)[0] == '{';
        scratch.write(merges ? "vocab.json" : json ? "tokenizer.json" : "vocab.txt", *tokenizer);
    }
    if (merges) scratch.write("merges.txt", *merges);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ScratchFolder scratch;
    scratch.clear();
    writeFolder(scratch, splitFileParts(data, size));
    auto checkpoint = attnscope::engine::ModelCheckpoint::open(scratch.folder());
    if (!checkpoint) return 0;
    for (const auto& expected : attnscope::engine::expectedTensors(checkpoint.value()->config()))
        (void)checkpoint.value()->readF32(expected.name);
    auto tokenizer = attnscope::engine::loadModelTokenizer(scratch.folder(), checkpoint.value()->config().modelType);
    if (tokenizer) exerciseTokenizer(tokenizer.value());
    return 0;
}
