// A GGUF file's header: magic, version, metadata pairs (every value type, arrays), the tensor table
// (dimensions, types, offsets) and the data section's placement against the file size.
#include "io/checkpoint/gguf_file.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto header = attnscope::engine::parseGgufHeader(data, size, "fuzz.gguf");
    (void)header;
    return 0;
}
