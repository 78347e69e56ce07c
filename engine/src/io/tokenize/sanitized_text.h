#pragma once
// Input text made valid UTF-8 for the model tokenizers: each maximal invalid subsequence becomes
// U+FFFD (as Python's errors="replace" and the WHATWG decoder do), and offsets in the sanitized
// text map back to byte offsets of the input.

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

class SanitizedText {
public:
    explicit SanitizedText(const std::string& input);

    /// Valid UTF-8; identical to the input when that was valid.
    const std::string& text() const { return m_replacements.empty() ? m_input : m_text; }
    /// "invalid UTF-8 at byte 12 replaced by U+FFFD (3 places in all)", or "" when valid.
    std::string notice() const;

    /// Input offset of the first byte at sanitized offset `pos` (a replacement maps to the start
    /// of the bytes it replaced).
    std::int64_t inputBegin(std::int64_t pos) const;
    /// Input offset just past sanitized offsets [.., pos) (a replacement maps to the end of the
    /// bytes it replaced).
    std::int64_t inputEnd(std::int64_t pos) const;

private:
    struct Replacement {
        std::int64_t at = 0;          ///< offset of the U+FFFD in the sanitized text
        std::int64_t inputBegin = 0;  ///< replaced bytes [inputBegin, inputEnd)
        std::int64_t inputEnd = 0;
    };
    /// Last replacement with `at <= pos`, or nullptr.
    const Replacement* lastAtOrBefore(std::int64_t pos) const;

    const std::string& m_input;
    std::string m_text;
    std::vector<Replacement> m_replacements;
};

/// Length of the maximal subpart of an ill-formed sequence at `data[pos]` (Unicode §3.9, U+FFFD
/// substitution of maximal subparts): 1 for a byte that cannot start a sequence, else the lead
/// byte plus the continuation bytes that were still allowed.
std::size_t invalidUtf8Length(const unsigned char* data, std::size_t size, std::size_t pos);

}  // namespace attnscope::engine
