// vocab.json + merges.txt of a GPT-2 / RoBERTa folder: the input is both, split at the first NUL.
#include "fuzz_tokenizer_common.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    const auto split = input.find('\0');
    const std::string vocab = input.substr(0, split), merges = split == std::string::npos ? std::string() : input.substr(split + 1);
    auto tokenizer = attnscope::engine::makeByteLevelBpeTokenizer(vocab, merges);
    if (tokenizer) exerciseTokenizer(tokenizer.value());
    return 0;
}
