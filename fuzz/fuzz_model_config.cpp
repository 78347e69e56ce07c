// config.json of a model folder, then the tensor list it implies.
#include <attnscope/model_checkpoint.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto config = attnscope::engine::parseModelConfig(text, "config.json");
    // (a config that parses must describe a model whose tensor list can be listed; a huge but
    // valid one is bounded by the reader's ranges)
    if (config && config->numLayers <= 64 && config->hiddenSize <= 4096) (void)attnscope::engine::expectedTensors(config.value());
    return 0;
}
