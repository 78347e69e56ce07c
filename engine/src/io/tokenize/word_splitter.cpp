#include "io/tokenize/word_splitter.h"

#include <unicode/uchar.h>
#include <unicode/uscript.h>

#include <utility>

namespace attnscope::engine {

namespace {

constexpr std::uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
constexpr std::uint64_t kInt64Mask = 0x7fffffffffffffffULL;

enum class CharClass {
    Space,
    Ideograph,          ///< Han, Hiragana, Katakana letter or digit
    Word,               ///< any other letter or digit
    Mark,               ///< M*
    Joiner,             ///< ZWJ, ZWNJ
    Pictograph,         ///< Extended_Pictographic
    RegionalIndicator,  ///< half of a flag
    EmojiExtender,      ///< skin-tone modifier, tag character
    Other,
};

bool isIdeographScript(UChar32 c) {
    // Script_Extensions rather than Script: U+30FC (prolonged sound mark) is Common by Script
    // but is used only in Hiragana and Katakana.
    return uscript_hasScript(c, USCRIPT_HAN) || uscript_hasScript(c, USCRIPT_HIRAGANA) ||
           uscript_hasScript(c, USCRIPT_KATAKANA);
}

CharClass classify(char32_t codePoint) {
    const auto c = static_cast<UChar32>(codePoint);
    if (c < 0x80) {
        // ASCII fast path: the same answers ICU gives, without the property lookups.
        if (c == ' ' || (c >= '\t' && c <= '\r')) return CharClass::Space;
        if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
            return CharClass::Word;
        return CharClass::Other;
    }
    if (u_isUWhiteSpace(c)) return CharClass::Space;
    const std::uint32_t mask = U_GET_GC_MASK(c);
    if (mask & (U_GC_L_MASK | U_GC_N_MASK))
        return isIdeographScript(c) ? CharClass::Ideograph : CharClass::Word;
    if (mask & U_GC_M_MASK) return CharClass::Mark;
    if (u_hasBinaryProperty(c, UCHAR_JOIN_CONTROL)) return CharClass::Joiner;
    if (u_hasBinaryProperty(c, UCHAR_REGIONAL_INDICATOR)) return CharClass::RegionalIndicator;
    if (u_hasBinaryProperty(c, UCHAR_EXTENDED_PICTOGRAPHIC)) return CharClass::Pictograph;
    if (u_hasBinaryProperty(c, UCHAR_EMOJI_MODIFIER) || (c >= 0xE0020 && c <= 0xE007F))
        return CharClass::EmojiExtender;
    return CharClass::Other;
}

}  // namespace

std::int64_t wordTokenId(std::string_view bytes) {
    std::uint64_t hash = kFnvOffsetBasis;
    for (const char byte : bytes) {
        hash ^= static_cast<unsigned char>(byte);
        hash *= kFnvPrime;
    }
    return static_cast<std::int64_t>(hash & kInt64Mask);
}

WordSplitter::WordSplitter(const std::string& text, std::vector<Token>& out)
    : m_text(text), m_out(out) {}

void WordSplitter::feed(char32_t codePoint, std::int64_t begin, std::int64_t end) {
    const CharClass cls = classify(codePoint);
    if (cls == CharClass::Space) {
        close();
        return;
    }

    bool extends = false;
    if (m_kind != RunKind::None) {
        switch (cls) {
        case CharClass::Mark:
        case CharClass::Joiner: extends = true; break;
        case CharClass::Word: extends = m_kind == RunKind::Word; break;
        case CharClass::EmojiExtender: extends = m_kind == RunKind::Emoji; break;
        case CharClass::Pictograph: extends = m_kind == RunKind::Emoji && m_afterJoiner; break;
        case CharClass::RegionalIndicator:
            extends = m_kind == RunKind::Flag && m_flagLength == 1;
            break;
        case CharClass::Space:
        case CharClass::Ideograph:
        case CharClass::Other: break;
        }
    }
    if (extends) {
        m_end = end;
        m_afterJoiner = cls == CharClass::Joiner;
        if (cls == CharClass::RegionalIndicator) ++m_flagLength;
        return;
    }

    close();
    switch (cls) {
    case CharClass::Word:
    case CharClass::Mark: m_kind = RunKind::Word; break;
    case CharClass::Pictograph: m_kind = RunKind::Emoji; break;
    case CharClass::RegionalIndicator: m_kind = RunKind::Flag; break;
    default: m_kind = RunKind::Single; break;
    }
    m_begin = begin;
    m_end = end;
    m_afterJoiner = cls == CharClass::Joiner;
    m_flagLength = cls == CharClass::RegionalIndicator ? 1 : 0;
}

void WordSplitter::finish() { close(); }

void WordSplitter::close() {
    if (m_kind == RunKind::None) return;
    Token token;
    token.text = m_text.substr(static_cast<std::size_t>(m_begin),
                               static_cast<std::size_t>(m_end - m_begin));
    token.byteBegin = m_begin;
    token.byteEnd = m_end;
    token.id = wordTokenId(token.text);
    m_out.push_back(std::move(token));
    m_kind = RunKind::None;
    m_afterJoiner = false;
    m_flagLength = 0;
}

}  // namespace attnscope::engine
