#include "io/tokenize/bert_pretokenizer.h"

#include "io/tokenize/byte_level.h"
#include "io/tokenize/utf8.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>

namespace attnscope::engine {

namespace {

constexpr char32_t kCapitalSigma = 0x03A3;
constexpr char32_t kSmallSigma = 0x03C3;
constexpr char32_t kFinalSigma = 0x03C2;

bool isCased(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_CASED); }
bool isCaseIgnorable(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_CASE_IGNORABLE); }

/// Unicode's Final_Sigma condition for chars[i] within one word: a cased letter before it (case-
/// ignorable characters skipped) and none after it. Python's str.lower() applies it too.
bool isFinalSigma(const std::vector<BertChar>& chars, std::size_t i) {
    std::size_t j = i;
    bool casedBefore = false;
    while (j > 0) {
        const char32_t c = chars[--j].codePoint;
        if (isCaseIgnorable(c)) continue;
        casedBefore = isCased(c);
        break;
    }
    if (!casedBefore) return false;
    for (std::size_t k = i + 1; k < chars.size(); ++k) {
        const char32_t c = chars[k].codePoint;
        if (isCaseIgnorable(c)) continue;
        return !isCased(c);
    }
    return true;
}

/// Full lowercase mapping in the root locale (never the user's: Turkish rules would turn "İ"
/// into "i" where Python gives "i̇").
void appendLower(char32_t c, std::vector<char32_t>& out) {
    if (c < 0x80) {
        out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
        return;
    }
    UChar src[2];
    int32_t srcLength = 0;
    U16_APPEND_UNSAFE(src, srcLength, static_cast<UChar32>(c));
    UChar dest[8];
    UErrorCode status = U_ZERO_ERROR;
    const int32_t length = u_strToLower(dest, 8, src, srcLength, "", &status);
    if (U_FAILURE(status)) {
        out.push_back(c);
        return;
    }
    for (int32_t i = 0; i < length;) {
        UChar32 lower;
        U16_NEXT(dest, i, length, lower);
        out.push_back(static_cast<char32_t>(lower));
    }
}

/// NFD of one character without its nonspacing marks (Mn).
void appendStripped(char32_t c, const icu::Normalizer2& nfd, std::vector<char32_t>& out) {
    if (c < 0x80) {
        out.push_back(c);
        return;
    }
    icu::UnicodeString decomposition;
    if (!nfd.getDecomposition(static_cast<UChar32>(c), decomposition)) {
        if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK) out.push_back(c);
        return;
    }
    for (int32_t i = 0; i < decomposition.length();) {
        const UChar32 d = decomposition.char32At(i);
        if (u_charType(d) != U_NON_SPACING_MARK) out.push_back(static_cast<char32_t>(d));
        i += U16_LENGTH(d);
    }
}

std::string toUtf8(const std::vector<BertChar>& chars) {
    std::string out;
    for (const BertChar& c : chars) appendUtf8(out, c.codePoint);
    return out;
}

}  // namespace

bool bertIsControl(char32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return false;
    return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_C_MASK) != 0;
}

bool bertIsCjk(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool bertIsPunctuation(char32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
    return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0;
}

void BertPreTokenizer::split(const std::string& text, std::int64_t begin, std::int64_t end,
                             std::vector<BertWord>& out) const {
    const auto* data = reinterpret_cast<const unsigned char*>(text.data());
    const auto stop = static_cast<std::size_t>(end);
    std::vector<BertChar> token;
    std::size_t pos = static_cast<std::size_t>(begin);
    while (pos < stop) {
        const Utf8Step step = decodeUtf8(data, stop, pos);
        const std::size_t length = step.length > 0 ? static_cast<std::size_t>(step.length) : 1;
        const char32_t c = step.length > 0 ? step.codePoint : 0xFFFD;
        const BertChar bc{c, static_cast<std::int64_t>(pos), static_cast<std::int64_t>(pos + length)};
        pos += length;
        if (m_options.cleanText && (c == 0 || c == 0xFFFD || bertIsControl(c))) continue;
        if (c == ' ' || u_isUWhiteSpace(static_cast<UChar32>(c))) {
            finishToken(token, out);
            continue;
        }
        if (m_options.handleChineseChars && bertIsCjk(c)) {
            finishToken(token, out);
            token.push_back(bc);
            finishToken(token, out);
            continue;
        }
        token.push_back(bc);
    }
    finishToken(token, out);
}

void BertPreTokenizer::finishToken(std::vector<BertChar>& token, std::vector<BertWord>& out) const {
    if (token.empty()) return;
    if (token.size() <= m_longestNeverSplit && m_neverSplit.count(toUtf8(token)) != 0) {
        out.push_back(BertWord{std::move(token), true});
        token.clear();
        return;
    }

    std::vector<BertChar> normalized;
    normalized.reserve(token.size());
    if (m_options.lowercase || m_options.stripAccents) {
        UErrorCode status = U_ZERO_ERROR;
        const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
        std::vector<char32_t> lowered;
        std::vector<char32_t> stripped;
        for (std::size_t i = 0; i < token.size(); ++i) {
            const BertChar& src = token[i];
            lowered.clear();
            if (!m_options.lowercase) lowered.push_back(src.codePoint);
            else if (src.codePoint == kCapitalSigma) lowered.push_back(isFinalSigma(token, i) ? kFinalSigma : kSmallSigma);
            else appendLower(src.codePoint, lowered);
            if (m_options.stripAccents && U_SUCCESS(status) && nfd != nullptr) {
                stripped.clear();
                for (const char32_t c : lowered) appendStripped(c, *nfd, stripped);
                lowered.swap(stripped);
            }
            for (const char32_t c : lowered) normalized.push_back(BertChar{c, src.begin, src.end});
        }
    } else {
        normalized = token;
    }
    token.clear();

    BertWord word;
    for (const BertChar& c : normalized) {
        if (bertIsPunctuation(c.codePoint)) {
            if (!word.chars.empty()) out.push_back(std::move(word));
            word = BertWord{};
            out.push_back(BertWord{{c}, false});
            continue;
        }
        word.chars.push_back(c);
    }
    if (!word.chars.empty()) out.push_back(std::move(word));
}

}  // namespace attnscope::engine
