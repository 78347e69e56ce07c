#pragma once
// IEEE half and bfloat16 to float, bit-exact (subnormals, signed zeros, Inf and NaN payloads kept):
// the safetensors reader and the GGUF block formats both store their scales and weights so.

#include <cstdint>
#include <cstring>

namespace attnscope::engine {

inline float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1Fu;
    std::uint32_t mantissa = h & 0x3FFu;
    std::uint32_t bits = 0;
    if (exponent == 0x1F) {
        bits = sign | 0x7F800000u | (mantissa << 13);  // Inf, or NaN keeping its payload
    } else if (exponent != 0) {
        bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        bits = sign;  // signed zero
    } else {
        // Subnormal half: shift the leading 1 up to the implicit bit, one exponent step each.
        exponent = 127 - 15 + 1;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            --exponent;
        }
        bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
    }
    float out = 0.0f;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

inline float bf16ToFloat(std::uint16_t h) {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float out = 0.0f;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

/// A little-endian 16-bit value at any address.
inline std::uint16_t loadU16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }

}  // namespace attnscope::engine
