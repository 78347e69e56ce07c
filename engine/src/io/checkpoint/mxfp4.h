#pragma once
// MXFP4 (the OCP Microscaling format as GPT-OSS's checkpoints store their experts): each group of
// 32 values is 16 bytes of 4-bit E2M1 codes — the low nibble the even value, the high nibble the
// odd one — and one byte of scale, an exponent biased by 127: value = code value · 2^(scale − 127),
// code values (0, 0.5, 1, 1.5, 2, 3, 4, 6) and their negatives for codes 8–15.

#include <cstdint>

namespace attnscope::engine {

/// The value of a 4-bit E2M1 code (0–15).
float mxfp4CodeValue(std::uint8_t code);

/// `rows` rows of `groups` groups: blocks [rows, groups, 16], scales [rows, groups] into
/// out [rows, groups · 32].
void dequantizeMxfp4(const std::uint8_t* blocks, const std::uint8_t* scales, std::int64_t rows, std::int64_t groups, float* out);

}  // namespace attnscope::engine
