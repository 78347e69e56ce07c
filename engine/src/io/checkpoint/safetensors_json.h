#pragma once
// Helpers shared by the safetensors reader and writer (private to engine/src/checkpoint).

#include <attnscope/safetensors.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnscope::engine::safetensors_detail {

/// The JSON schema of the format caps every integer at 2^48; offsets and dims above it are
/// rejected, which also keeps every dim representable as int64 in PlainTensor::shape.
constexpr std::uint64_t kMaxJsonInteger = std::uint64_t{1} << 48;
/// The reference reader's (and writer's) MAX_HEADER_SIZE.
constexpr std::uint64_t kMaxHeaderSize = 100'000'000;
constexpr std::size_t kMaxTensorCount = 1'000'000;

/// Every dtype of the format with its header spelling and size in bits.
struct DTypeEntry {
    StDType dtype;
    const char* name;
    int bits;
};

inline constexpr DTypeEntry kDTypes[] = {
    {StDType::BOOL, "BOOL", 8},          {StDType::F4, "F4", 4},
    {StDType::F6_E2M3, "F6_E2M3", 6},    {StDType::F6_E3M2, "F6_E3M2", 6},
    {StDType::U8, "U8", 8},              {StDType::I8, "I8", 8},
    {StDType::F8_E5M2, "F8_E5M2", 8},    {StDType::F8_E4M3, "F8_E4M3", 8},
    {StDType::F8_E8M0, "F8_E8M0", 8},    {StDType::F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {StDType::F8_E5M2FNUZ, "F8_E5M2FNUZ", 8}, {StDType::I16, "I16", 16},
    {StDType::U16, "U16", 16},           {StDType::F16, "F16", 16},
    {StDType::BF16, "BF16", 16},         {StDType::I32, "I32", 32},
    {StDType::U32, "U32", 32},           {StDType::F32, "F32", 32},
    {StDType::C64, "C64", 64},           {StDType::F64, "F64", 64},
    {StDType::I64, "I64", 64},           {StDType::U64, "U64", 64},
};

inline bool parseDType(const std::string& name, StDType& out) {
    for (const auto& entry : kDTypes) {
        if (name == entry.name) {
            out = entry.dtype;
            return true;
        }
    }
    return false;
}

/// Strict UTF-8 check as Rust's str::from_utf8 does it: no overlong forms, no surrogates,
/// nothing above U+10FFFF. Returns the offset of the first bad byte, or `size` when valid.
inline std::size_t firstInvalidUtf8(const std::uint8_t* data, std::size_t size) {
    std::size_t i = 0;
    while (i < size) {
        const std::uint8_t c = data[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len = 0;
        std::uint8_t lo = 0x80;
        std::uint8_t hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0) lo = 0xA0;  // overlong
            if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0) lo = 0x90;  // overlong
            if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
        } else {
            return i;
        }
        if (size - i < len) return i;
        if (data[i + 1] < lo || data[i + 1] > hi) return i;
        for (std::size_t k = 2; k < len; ++k) {
            if (data[i + k] < 0x80 || data[i + k] > 0xBF) return i;
        }
        i += len;
    }
    return size;
}

inline bool isValidUtf8(const std::string& s) {
    return firstInvalidUtf8(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()) == s.size();
}

/// Appends `s` as a JSON string literal. Control characters are escaped so that the header
/// never contains a raw 0x00 byte, which our reader refuses.
inline void appendJsonString(std::string& out, const std::string& s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (c < 0x20) {
                out += "\\u00";
                out += kHex[c >> 4];
                out += kHex[c & 0xF];
            } else {
                out += ch;
            }
        }
    }
    out += '"';
}

/// A name as it appears in error messages: quoted, with control characters escaped, cut short
/// so a hostile 100 MB key cannot flood the log.
inline std::string quoteName(const std::string& name) {
    constexpr std::size_t kMaxShown = 200;
    std::string shown = name;
    if (shown.size() > kMaxShown) {
        std::size_t cut = kMaxShown;
        while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;
        shown = shown.substr(0, cut) + "...";
    }
    std::string out;
    appendJsonString(out, shown);
    out.front() = '\'';
    out.back() = '\'';
    return out;
}

}  // namespace attnscope::engine::safetensors_detail
