#include "io/tokenize/utf8.h"

#include <attnscope/tokenize.h>

namespace attnscope::engine {

namespace {

bool isContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

Utf8Step decodeUtf8(const unsigned char* data, std::size_t size, std::size_t pos) {
    const unsigned char lead = data[pos];
    if (lead < 0x80) return {lead, 1};

    // Table 3-7: the lead byte fixes the length and the allowed range of the second byte; that
    // range is what excludes overlong forms (E0, F0), surrogates (ED) and > U+10FFFF (F4).
    int length = 0;
    unsigned char secondLo = 0x80;
    unsigned char secondHi = 0xBF;
    char32_t codePoint = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
        codePoint = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        codePoint = lead & 0x0F;
        if (lead == 0xE0) secondLo = 0xA0;
        if (lead == 0xED) secondHi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        codePoint = lead & 0x07;
        if (lead == 0xF0) secondLo = 0x90;
        if (lead == 0xF4) secondHi = 0x8F;
    } else {
        return {};  // 80-BF (stray continuation), C0, C1, F5-FF
    }

    if (size - pos < static_cast<std::size_t>(length)) return {};
    const unsigned char second = data[pos + 1];
    if (second < secondLo || second > secondHi) return {};
    codePoint = (codePoint << 6) | (second & 0x3F);
    for (int i = 2; i < length; ++i) {
        const unsigned char next = data[pos + static_cast<std::size_t>(i)];
        if (!isContinuation(next)) return {};
        codePoint = (codePoint << 6) | (next & 0x3F);
    }
    return {codePoint, length};
}

std::int64_t findInvalidUtf8(const std::string& text) {
    const auto* data = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t size = text.size();
    std::size_t pos = 0;
    while (pos < size) {
        const Utf8Step step = decodeUtf8(data, size, pos);
        if (step.length == 0) return static_cast<std::int64_t>(pos);
        pos += static_cast<std::size_t>(step.length);
    }
    return -1;
}

}  // namespace attnscope::engine
