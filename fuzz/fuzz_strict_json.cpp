// The strict JSON reader every JSON file goes through (sessions, recipes, configs, tokenizers).
#include "base/api/strict_json.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto parsed = attnscope::engine::parseStrictJson(std::string(reinterpret_cast<const char*>(data), size), "input.json");
    (void)parsed;
    return 0;
}
