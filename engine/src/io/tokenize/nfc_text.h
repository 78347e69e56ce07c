#pragma once
// Text put in Unicode Normalization Form C, as a tokenizer.json `NFC` normalizer does (Qwen2/3),
// with offsets in the normalized text mapped back to the source's. Text already in NFC (nearly
// all text) is not copied.

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

class NfcText {
public:
    /// `source` must be valid UTF-8 and outlive this object; with `normalize` false the text is
    /// taken as it is.
    NfcText(const std::string& source, bool normalize);

    const std::string& text() const { return m_changed ? m_text : m_source; }
    bool changed() const { return m_changed; }
    /// Source offset of the normalized byte at `pos`: a composed character maps to the start of
    /// the characters it came from.
    std::int64_t sourceBegin(std::int64_t pos) const;
    /// Source offset just past normalized bytes [.., pos): the end of what they came from.
    std::int64_t sourceEnd(std::int64_t pos) const;

private:
    /// A stretch between normalization boundaries that changed: [at, at + length) of the
    /// normalized text came from [sourceAt, sourceAt + sourceLength).
    struct Span {
        std::int64_t at = 0, length = 0, sourceAt = 0, sourceLength = 0;
    };
    /// Last span starting at or before `pos`, or nullptr.
    const Span* spanAtOrBefore(std::int64_t pos) const;

    const std::string& m_source;
    std::string m_text;
    std::vector<Span> m_spans;
    bool m_changed = false;
};

}  // namespace attnscope::engine
