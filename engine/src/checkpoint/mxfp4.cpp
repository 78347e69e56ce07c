#include "checkpoint/mxfp4.h"

#include <cmath>

namespace attnscope::engine {

float mxfp4CodeValue(std::uint8_t code) {
    static constexpr float kValues[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                          -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
    return kValues[code & 0x0F];
}

void dequantizeMxfp4(const std::uint8_t* blocks, const std::uint8_t* scales, std::int64_t rows, std::int64_t groups, float* out) {
    for (std::int64_t g = 0; g < rows * groups; ++g) {
        const int exponent = static_cast<int>(scales[g]) - 127;
        const std::uint8_t* block = blocks + g * 16;
        float* values = out + g * 32;
        for (int b = 0; b < 16; ++b) {
            values[2 * b] = std::ldexp(mxfp4CodeValue(block[b] & 0x0F), exponent);
            values[2 * b + 1] = std::ldexp(mxfp4CodeValue(static_cast<std::uint8_t>(block[b] >> 4)), exponent);
        }
    }
}

}  // namespace attnscope::engine
