// The safetensors header: 8-byte length, JSON, offsets against the file size.
#include <attnscope/safetensors.h>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto header = attnscope::engine::parseSafetensorsHeader(data, size);
    (void)header;
    return 0;
}
