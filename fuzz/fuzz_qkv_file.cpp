// The explicit Q/K/V file of `attnscope-cli run --qkv PATH`: q, k, v, key_padding and the tensors
// variants take as inputs (Transformer-XL's r_w_bias, r_r_bias, pos_keys).
#include "fuzz_files.h"

#include "cli/qkv_file.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ScratchFolder scratch;
    const std::string path = scratch.write("qkv.safetensors", std::string(reinterpret_cast<const char*>(data), size));
    auto read = attnscope::cli::readQkvFile(path);
    if (!read) return 0;
    // (what the run reads next: every element of q, k and v, which must lie inside the mapping)
    float sum = 0.0f;
    for (const auto* t : {&read->qkv.q, &read->qkv.k, &read->qkv.v})
        for (std::int64_t i = 0; i < t->numel(); ++i) sum += t->data.get()[i];
    volatile float sink = sum;
    (void)sink;
    return 0;
}
