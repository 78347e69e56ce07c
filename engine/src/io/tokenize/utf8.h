#pragma once
// Strict UTF-8 decoding (Unicode 15, Table 3-7), shared by the tokenizers and findInvalidUtf8.

#include <cstddef>

namespace attnscope::engine {

/// One decoded code point. `length` is 1-4 bytes, or 0 when the bytes at the position are not
/// well-formed UTF-8 (the offending sequence starts at that position).
struct Utf8Step {
    char32_t codePoint = 0;
    int length = 0;
};

/// Decodes the code point that starts at `data[pos]`; `pos < size` is required. Rejects overlong
/// forms, surrogates (U+D800-DFFF), values above U+10FFFF, stray continuation bytes, truncated
/// sequences and the bytes C0, C1, F5-FF.
Utf8Step decodeUtf8(const unsigned char* data, std::size_t size, std::size_t pos);

}  // namespace attnscope::engine
