#pragma once
// Word segmentation for TokenizerKind::Words: a small state machine over code points, fed in
// text order. No vocabulary and no locale: the same text always gives the same tokens.

#include <attnscope/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::engine {

/// Id of a word token: 64-bit FNV-1a of the token's UTF-8 bytes with the top bit cleared, so it
/// is a non-negative int64. Stable across runs, builds and platforms; identical words get
/// identical ids (different words may collide, with probability ~n^2 / 2^64).
std::int64_t wordTokenId(std::string_view bytes);

/// Rules, in order (every code point is classified with ICU, Unicode 15 on Debian 12):
/// - White space (White_Space property) ends the open token and is dropped.
/// - A letter or digit (L*, N*) of the Han, Hiragana or Katakana scripts is a token of its own
///   (CJK is written without spaces; BERT also splits it per character).
/// - Other letters and digits, and combining marks (M*), form maximal runs.
/// - A combining mark (which includes the variation selectors U+FE0F/U+FE0E) or a join control
///   (ZWJ U+200D, ZWNJ U+200C) never starts a token when one is open: it attaches to the token
///   before it, so "e\u0301" and "!\u0301" stay whole. At the start of the text or after white
///   space, a mark starts a word run.
/// - An Extended_Pictographic code point starts an emoji token that also takes the skin-tone
///   modifiers (U+1F3FB-1F3FF), tag characters (U+E0020-E007F) and, after a ZWJ, the next
///   pictograph; so "👋🏽" and "👨‍👩‍👧" are one token each. Two regional indicators form one flag.
/// - Every other code point (punctuation, symbols, controls) is a token of its own.
class WordSplitter {
public:
    /// Appends the tokens of `text` to `out`; both must outlive the splitter.
    WordSplitter(const std::string& text, std::vector<Token>& out);

    /// Feeds the code point that occupies bytes [begin, end) of the text.
    void feed(char32_t codePoint, std::int64_t begin, std::int64_t end);
    /// Emits the token still open; call once after the last code point.
    void finish();

private:
    enum class RunKind { None, Word, Single, Emoji, Flag };

    void close();

    const std::string& m_text;
    std::vector<Token>& m_out;
    RunKind m_kind = RunKind::None;
    std::int64_t m_begin = 0;
    std::int64_t m_end = 0;
    bool m_afterJoiner = false;  ///< the last code point of the open token was ZWJ/ZWNJ
    int m_flagLength = 0;        ///< regional indicators in the open Flag token
};

}  // namespace attnscope::engine
