#include "io/checkpoint/mxfp4.h"

#include <cmath>

namespace attnscope::engine {

float mxfp4CodeValue(std::uint8_t code) {
    static constexpr float kValues[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                          -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
    return kValues[code & 0x0F];
}

void dequantizeMxfp4(const std::uint8_t* blocks, const std::uint8_t* scales, std::int64_t rows, std::int64_t groups, float* out) {
    float table[16];  // the group's 16 values, then a lookup per nibble (an ldexp per value is 5× slower)
    int tableExponent = -1000;
    for (std::int64_t g = 0; g < rows * groups; ++g) {
        const int exponent = static_cast<int>(scales[g]) - 127;
        if (exponent != tableExponent) {
            for (std::uint8_t code = 0; code < 16; ++code) table[code] = std::ldexp(mxfp4CodeValue(code), exponent);
            tableExponent = exponent;
        }
        const std::uint8_t* block = blocks + g * 16;
        float* values = out + g * 32;
        for (int b = 0; b < 16; ++b) {
            values[2 * b] = table[block[b] & 0x0F];
            values[2 * b + 1] = table[block[b] >> 4];
        }
    }
}

}  // namespace attnscope::engine
