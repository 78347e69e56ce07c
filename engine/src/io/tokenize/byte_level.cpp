#include "io/tokenize/byte_level.h"

#include "io/tokenize/utf8.h"

#include <attnscope/model_tokenizer.h>

namespace attnscope::engine {

void appendUtf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

const ByteLevelTable& ByteLevelTable::instance() {
    static const ByteLevelTable table;
    return table;
}

// bytes_to_unicode: the 188 printable bytes keep their code point; the other 68, in increasing
// order, take U+0100 onwards, so every byte has a visible stand-in and the mapping is reversible.
ByteLevelTable::ByteLevelTable() {
    m_bytes.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const char32_t c = printable ? static_cast<char32_t>(b) : next++;
        m_chars[static_cast<std::size_t>(b)] = c;
        m_bytes[c] = b;
        appendUtf8(m_utf8[static_cast<std::size_t>(b)], c);
    }
}

std::string ByteLevelTable::decodeToBytes(const std::string& tokenText) const {
    std::string out;
    out.reserve(tokenText.size());
    const auto* data = reinterpret_cast<const unsigned char*>(tokenText.data());
    std::size_t pos = 0;
    while (pos < tokenText.size()) {
        const Utf8Step step = decodeUtf8(data, tokenText.size(), pos);
        if (step.length == 0) {  // vocabulary strings are validated; keep the byte regardless
            out += tokenText[pos++];
            continue;
        }
        const int byte = toByte(step.codePoint);
        if (byte >= 0) out += static_cast<char>(byte);
        else out.append(tokenText, pos, static_cast<std::size_t>(step.length));
        pos += static_cast<std::size_t>(step.length);
    }
    return out;
}

char32_t byteLevelChar(unsigned char byte) { return ByteLevelTable::instance().toChar(byte); }

}  // namespace attnscope::engine
