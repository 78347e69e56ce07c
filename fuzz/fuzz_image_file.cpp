// A picture file as `--image`, File ▸ Open Image and the image decoder module read it
// (common/image_file.cpp: Qt's readers, the size caps, the truncation rules, decoder warnings as
// refusals), then the planes the engine takes.
#include "fuzz_files.h"

#include "common/image_load.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ScratchFolder scratch;
    const std::string path = scratch.write("picture", std::string(reinterpret_cast<const char*>(data), size));
    auto image = attnscope::app::loadImageForEngine(path);
    if (image) (void)image.value().rgb.size();
    return 0;
}
