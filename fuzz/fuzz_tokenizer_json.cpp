// tokenizer.json (WordPiece or BPE models, normalisers, pre-tokenizers, post-processors).
#include "fuzz_tokenizer_common.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto tokenizer = attnscope::engine::makeTokenizerFromJson(std::string(reinterpret_cast<const char*>(data), size));
    if (tokenizer) exerciseTokenizer(tokenizer.value());
    return 0;
}
