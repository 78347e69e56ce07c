#pragma once
// BERT's BasicTokenizer (transformers tokenization_bert.py; tokenizers BertNormalizer +
// BertPreTokenizer), in the order of FORMATS.md §1.7.1: clean the text, isolate CJK ideographs,
// split on white space, lowercase (ICU root locale, with Greek final sigma) and strip accents
// (NFD without Mn) per word, split on punctuation. Every output character remembers the span of
// the input character it came from.

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace attnscope::engine {

struct BertChar {
    char32_t codePoint = 0;
    std::int64_t begin = 0;  ///< bytes of the source character in the text
    std::int64_t end = 0;
};

struct BertWord {
    std::vector<BertChar> chars;
    bool neverSplit = false;  ///< a never_split token: look it up whole
};

struct BertPreTokenizerOptions {
    bool cleanText = true;
    bool handleChineseChars = true;
    bool lowercase = true;
    bool stripAccents = true;
};

class BertPreTokenizer {
public:
    BertPreTokenizer(BertPreTokenizerOptions options, std::unordered_set<std::string> neverSplit)
        : m_options(options), m_neverSplit(std::move(neverSplit)) {
        for (const std::string& token : m_neverSplit) m_longestNeverSplit = std::max(m_longestNeverSplit, token.size());
    }

    /// Appends the words of text[begin, end) (valid UTF-8) to `out`.
    void split(const std::string& text, std::int64_t begin, std::int64_t end, std::vector<BertWord>& out) const;

private:
    void finishToken(std::vector<BertChar>& token, std::vector<BertWord>& out) const;

    BertPreTokenizerOptions m_options;
    std::unordered_set<std::string> m_neverSplit;
    std::size_t m_longestNeverSplit = 0;  ///< in bytes, so also a bound on characters
};

/// transformers' _is_control: category C* (Cc, Cf, Cs, Co, Cn) except \t \n \r.
bool bertIsControl(char32_t c);
/// transformers' _is_chinese_char ranges (docs/TOKENIZERS.md).
bool bertIsCjk(char32_t c);
/// ASCII 33-47, 58-64, 91-96, 123-126, or category P*.
bool bertIsPunctuation(char32_t c);

}  // namespace attnscope::engine
