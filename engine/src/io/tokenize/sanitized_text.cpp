#include "io/tokenize/sanitized_text.h"

#include "io/tokenize/utf8.h"

#include <algorithm>

namespace attnscope::engine {

namespace {
constexpr char kReplacementUtf8[] = "\xEF\xBF\xBD";
constexpr std::int64_t kReplacementBytes = 3;
}  // namespace

std::size_t invalidUtf8Length(const unsigned char* data, std::size_t size, std::size_t pos) {
    const unsigned char lead = data[pos];
    std::size_t length = 0;
    unsigned char secondLo = 0x80;
    unsigned char secondHi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) secondLo = 0xA0;
        if (lead == 0xED) secondHi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) secondLo = 0x90;
        if (lead == 0xF4) secondHi = 0x8F;
    } else {
        return 1;
    }
    std::size_t n = 1;
    while (n < length && pos + n < size) {
        const unsigned char byte = data[pos + n];
        const bool allowed = n == 1 ? (byte >= secondLo && byte <= secondHi) : (byte & 0xC0) == 0x80;
        if (!allowed) break;
        ++n;
    }
    return n;
}

// Valid input (the usual case) is not copied: text() returns the input itself and the offset
// maps are the identity.
SanitizedText::SanitizedText(const std::string& input) : m_input(input) {
    const auto* data = reinterpret_cast<const unsigned char*>(input.data());
    const std::size_t size = input.size();
    std::size_t pos = 0;
    std::size_t copiedUpTo = 0;
    while (pos < size) {
        if (data[pos] < 0x80) {
            ++pos;
            continue;
        }
        const Utf8Step step = decodeUtf8(data, size, pos);
        if (step.length > 0) {
            pos += static_cast<std::size_t>(step.length);
            continue;
        }
        if (m_replacements.empty()) m_text.reserve(size + 16);
        m_text.append(input, copiedUpTo, pos - copiedUpTo);
        const std::size_t bad = invalidUtf8Length(data, size, pos);
        m_replacements.push_back(Replacement{static_cast<std::int64_t>(m_text.size()),
                                             static_cast<std::int64_t>(pos),
                                             static_cast<std::int64_t>(pos + bad)});
        m_text += kReplacementUtf8;
        pos += bad;
        copiedUpTo = pos;
    }
    if (!m_replacements.empty()) m_text.append(input, copiedUpTo, std::string::npos);
}

std::string SanitizedText::notice() const {
    if (m_replacements.empty()) return {};
    std::string out = "invalid UTF-8 at byte " + std::to_string(m_replacements.front().inputBegin) +
                      " replaced by U+FFFD";
    if (m_replacements.size() > 1)
        out += " (" + std::to_string(m_replacements.size()) + " places in all)";
    return out;
}

const SanitizedText::Replacement* SanitizedText::lastAtOrBefore(std::int64_t pos) const {
    auto it = std::upper_bound(m_replacements.begin(), m_replacements.end(), pos,
                               [](std::int64_t p, const Replacement& r) { return p < r.at; });
    if (it == m_replacements.begin()) return nullptr;
    return &*(it - 1);
}

std::int64_t SanitizedText::inputBegin(std::int64_t pos) const {
    const Replacement* r = lastAtOrBefore(pos);
    if (r == nullptr) return pos;
    if (pos < r->at + kReplacementBytes) return r->inputBegin;
    return r->inputEnd + (pos - r->at - kReplacementBytes);
}

std::int64_t SanitizedText::inputEnd(std::int64_t pos) const {
    const Replacement* r = lastAtOrBefore(pos - 1);
    if (r == nullptr) return pos;
    if (pos <= r->at + kReplacementBytes) return r->inputEnd;
    return r->inputEnd + (pos - r->at - kReplacementBytes);
}

}  // namespace attnscope::engine
