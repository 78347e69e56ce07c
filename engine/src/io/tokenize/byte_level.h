#pragma once
// GPT-2's reversible byte ↔ unicode table (openai/gpt-2 encoder.py, bytes_to_unicode): printable
// Latin-1 bytes stand for themselves, the 68 others map to U+0100.. in increasing order, so every
// BPE token string is printable text.

#include <array>
#include <string>

namespace attnscope::engine {

class ByteLevelTable {
public:
    static const ByteLevelTable& instance();

    char32_t toChar(unsigned char byte) const { return m_chars[byte]; }
    /// UTF-8 of toChar(byte), 1-2 bytes.
    const std::string& toUtf8(unsigned char byte) const { return m_utf8[byte]; }
    /// Byte for a table code point, or -1 when `c` is not in the table.
    int toByte(char32_t c) const { return c < m_bytes.size() ? m_bytes[c] : -1; }

    /// Maps the token strings' code points back to bytes; code points outside the table are kept
    /// as their UTF-8.
    std::string decodeToBytes(const std::string& tokenText) const;

private:
    ByteLevelTable();
    std::array<char32_t, 256> m_chars{};
    std::array<std::string, 256> m_utf8;
    std::array<int, 0x144> m_bytes{};
};

/// Appends the UTF-8 encoding of `c` (a valid scalar value).
void appendUtf8(std::string& out, char32_t c);

}  // namespace attnscope::engine
