#include "io/tokenize/nfc_text.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <algorithm>

namespace attnscope::engine {

namespace {

const icu::Normalizer2* nfc() {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* instance = icu::Normalizer2::getNFCInstance(status);
    return U_SUCCESS(status) ? instance : nullptr;
}

std::int32_t utf8Length(unsigned char lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }

}  // namespace

// Chunks run from one normalization boundary (hasBoundaryBefore) to the next: NFC never
// composes across one, so each chunk normalizes on its own and an unchanged chunk maps byte for
// byte.
NfcText::NfcText(const std::string& source, bool normalize) : m_source(source) {
    const icu::Normalizer2* normalizer = nfc();
    if (!normalize || normalizer == nullptr) return;
    UErrorCode status = U_ZERO_ERROR;
    const icu::UnicodeString whole = icu::UnicodeString::fromUTF8(source);
    if (normalizer->quickCheck(whole, status) == UNORM_YES && U_SUCCESS(status)) return;

    const auto* data = reinterpret_cast<const unsigned char*>(source.data());
    const auto size = static_cast<std::int64_t>(source.size());
    std::int64_t chunkBegin = 0;
    auto flush = [&](std::int64_t chunkEnd) {
        if (chunkEnd <= chunkBegin) return;
        const std::string piece = source.substr(static_cast<std::size_t>(chunkBegin), static_cast<std::size_t>(chunkEnd - chunkBegin));
        UErrorCode s = U_ZERO_ERROR;
        const icu::UnicodeString unit = icu::UnicodeString::fromUTF8(piece);
        if (normalizer->isNormalized(unit, s) || U_FAILURE(s)) {
            m_text += piece;
        } else {
            std::string composed;
            normalizer->normalize(unit, s).toUTF8String(composed);
            m_spans.push_back(Span{static_cast<std::int64_t>(m_text.size()), static_cast<std::int64_t>(composed.size()), chunkBegin,
                                   chunkEnd - chunkBegin});
            m_text += composed;
        }
        chunkBegin = chunkEnd;
    };
    std::int64_t pos = 0;
    while (pos < size) {
        const std::int32_t length = std::min<std::int64_t>(utf8Length(data[pos]), size - pos);
        UChar32 c = 0;
        std::int32_t i = 0;
        U8_NEXT(data + pos, i, length, c);
        if (pos > chunkBegin && c >= 0 && normalizer->hasBoundaryBefore(c)) flush(pos);
        pos += length;
    }
    flush(size);
    m_changed = !m_spans.empty();
}

const NfcText::Span* NfcText::spanAtOrBefore(std::int64_t pos) const {
    const auto it = std::upper_bound(m_spans.begin(), m_spans.end(), pos, [](std::int64_t p, const Span& s) { return p < s.at; });
    return it == m_spans.begin() ? nullptr : &*std::prev(it);
}

std::int64_t NfcText::sourceBegin(std::int64_t pos) const {
    if (!m_changed) return pos;
    const Span* s = spanAtOrBefore(pos);
    if (s == nullptr) return pos;
    if (pos < s->at + s->length) return s->sourceAt;
    return pos - (s->at + s->length) + s->sourceAt + s->sourceLength;
}

std::int64_t NfcText::sourceEnd(std::int64_t pos) const {
    if (!m_changed) return pos;
    const Span* s = spanAtOrBefore(pos - 1);
    if (s == nullptr) return pos;
    if (pos <= s->at + s->length) return s->sourceAt + s->sourceLength;
    return pos - (s->at + s->length) + s->sourceAt + s->sourceLength;
}

}  // namespace attnscope::engine
