#include "io/checkpoint/ggml_dequant.h"

#include "io/checkpoint/gguf_file.h"
#include "io/checkpoint/half_float.h"
#include "base/kernels/cpu_features.h"

#include <cstring>

namespace attnscope::engine {

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
void dequantizeQ8_0Avx2(const std::uint8_t* src, std::int64_t blocks, float* out);
void dequantizeQ4_KAvx2(const std::uint8_t* src, std::int64_t blocks, float* out);
void dequantizeQ6_KAvx2(const std::uint8_t* src, std::int64_t blocks, float* out);
#endif

namespace {

constexpr int kQK = 32;    // values per block of the 32-value formats
constexpr int kQKK = 256;  // values per block of the K formats

float half(const std::uint8_t* p) { return halfToFloat(loadU16(p)); }

// Q4_0 [d f16][16 bytes]: byte j holds value j (low nibble) and j + 16 (high), each minus 8, times d.
void q4_0(const std::uint8_t* b, float* y) {
    const float d = half(b);
    const std::uint8_t* qs = b + 2;
    for (int j = 0; j < kQK / 2; ++j) {
        y[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
        y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
}

// Q4_1 [d][m][16 bytes]: nibbles times d plus m.
void q4_1(const std::uint8_t* b, float* y) {
    const float d = half(b), m = half(b + 2);
    const std::uint8_t* qs = b + 4;
    for (int j = 0; j < kQK / 2; ++j) {
        y[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
        y[j + kQK / 2] = static_cast<float>(qs[j] >> 4) * d + m;
    }
}

// Q5_0 [d][qh u32][16 bytes]: bit j of qh is value j's fifth bit, bit j + 16 value j + 16's; minus 16.
void q5_0(const std::uint8_t* b, float* y) {
    const float d = half(b);
    std::uint32_t qh;
    std::memcpy(&qh, b + 2, 4);
    const std::uint8_t* qs = b + 6;
    for (int j = 0; j < kQK / 2; ++j) {
        const int high0 = static_cast<int>(((qh >> j) << 4) & 0x10), high1 = static_cast<int>((qh >> (j + 12)) & 0x10);
        y[j] = static_cast<float>(((qs[j] & 0x0F) | high0) - 16) * d;
        y[j + kQK / 2] = static_cast<float>(((qs[j] >> 4) | high1) - 16) * d;
    }
}

// Q5_1 [d][m][qh][16 bytes]: as Q5_0 without the offset, plus m.
void q5_1(const std::uint8_t* b, float* y) {
    const float d = half(b), m = half(b + 2);
    std::uint32_t qh;
    std::memcpy(&qh, b + 4, 4);
    const std::uint8_t* qs = b + 8;
    for (int j = 0; j < kQK / 2; ++j) {
        const int high0 = static_cast<int>(((qh >> j) << 4) & 0x10), high1 = static_cast<int>((qh >> (j + 12)) & 0x10);
        y[j] = static_cast<float>((qs[j] & 0x0F) | high0) * d + m;
        y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) | high1) * d + m;
    }
}

// Q8_0 [d][32 int8].
void q8_0(const std::uint8_t* b, float* y) {
    const float d = half(b);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(static_cast<std::int8_t>(b[2 + j])) * d;
}

// Q2_K [scales 16][qs 64][d][dmin]: sixteen groups of 16; a group's byte holds its scale (low
// nibble) and min (high); 2-bit values, four per byte, the byte's pairs of bits for the four
// 32-value quarters of each 128.
void q2_K(const std::uint8_t* b, float* y) {
    const std::uint8_t* scales = b;
    const std::uint8_t* q = b + 16;
    const float d = half(b + 80), dmin = half(b + 82);
    int is = 0;
    for (int n = 0; n < kQKK; n += 128) {
        int shift = 0;
        for (int j = 0; j < 4; ++j) {
            for (int half16 = 0; half16 < 2; ++half16) {
                const std::uint8_t sc = scales[is++];
                const float dl = d * static_cast<float>(sc & 0x0F), ml = dmin * static_cast<float>(sc >> 4);
                for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * half16] >> shift) & 3) - ml;
            }
            shift += 2;
        }
        q += 32;
    }
}

// Q3_K [hmask 32][qs 64][scales 12][d]: 2 low bits as Q2_K, the third from hmask (clear: minus 4),
// sixteen 6-bit signed scales (minus 32) packed in 12 bytes.
void q3_K(const std::uint8_t* b, float* y) {
    const std::uint8_t* hm = b;
    const std::uint8_t* q = b + 32;
    const float dAll = half(b + 108);
    std::uint32_t aux[4];
    std::memcpy(aux, b + 96, 12);
    constexpr std::uint32_t kMask1 = 0x03030303u, kMask2 = 0x0f0f0f0fu;
    const std::uint32_t tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & kMask2) | (((tmp >> 4) & kMask1) << 4);
    aux[3] = ((aux[1] >> 4) & kMask2) | (((tmp >> 6) & kMask1) << 4);
    aux[0] = (aux[0] & kMask2) | (((tmp >> 0) & kMask1) << 4);
    aux[1] = (aux[1] & kMask2) | (((tmp >> 2) & kMask1) << 4);
    std::int8_t scales[16];
    std::memcpy(scales, aux, 16);
    int is = 0;
    std::uint8_t m = 1;
    for (int n = 0; n < kQKK; n += 128) {
        int shift = 0;
        for (int j = 0; j < 4; ++j) {
            for (int half16 = 0; half16 < 2; ++half16) {
                const float dl = dAll * static_cast<float>(scales[is++] - 32);
                for (int l = 16 * half16; l < 16 * half16 + 16; ++l)
                    *y++ = dl * static_cast<float>(((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
            }
            shift += 2;
            m = static_cast<std::uint8_t>(m << 1);
        }
        q += 32;
    }
}

}  // namespace

// The K formats' eight 6-bit scales and mins in 12 bytes (ggml's get_scale_min_k4).
void ggmlScaleMinK4(int j, const std::uint8_t* q, std::uint8_t& scale, std::uint8_t& min) {
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = static_cast<std::uint8_t>((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4));
        min = static_cast<std::uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

namespace {

// Q4_K [d][dmin][scales 12][qs 128]: eight groups of 32, each d·scale·nibble − dmin·min; a
// 64-value pair of groups shares 32 bytes (low nibbles, then high).
void q4_K(const std::uint8_t* b, float* y) {
    const float d = half(b), dmin = half(b + 2);
    const std::uint8_t* scales = b + 4;
    const std::uint8_t* q = b + 16;
    for (int is = 0; is < 8; is += 2, q += 32) {
        std::uint8_t sc, mn;
        ggmlScaleMinK4(is, scales, sc, mn);
        const float d1 = d * sc, m1 = dmin * mn;
        ggmlScaleMinK4(is + 1, scales, sc, mn);
        const float d2 = d * sc, m2 = dmin * mn;
        for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0F) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
}

// Q5_K [d][dmin][scales 12][qh 32][qs 128]: Q4_K plus a fifth bit from qh (bit 2g for group 2g's
// low nibbles, 2g + 1 for the high ones).
void q5_K(const std::uint8_t* b, float* y) {
    const float d = half(b), dmin = half(b + 2);
    const std::uint8_t* scales = b + 4;
    const std::uint8_t* qh = b + 16;
    const std::uint8_t* ql = b + 48;
    std::uint8_t u1 = 1, u2 = 2;
    for (int is = 0; is < 8; is += 2, ql += 32) {
        std::uint8_t sc, mn;
        ggmlScaleMinK4(is, scales, sc, mn);
        const float d1 = d * sc, m1 = dmin * mn;
        ggmlScaleMinK4(is + 1, scales, sc, mn);
        const float d2 = d * sc, m2 = dmin * mn;
        for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((ql[l] & 0x0F) + ((qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
        u1 = static_cast<std::uint8_t>(u1 << 2);
        u2 = static_cast<std::uint8_t>(u2 << 2);
    }
}

}  // namespace

// Q6_K [ql 128][qh 64][scales 16 int8][d]: 4 low bits from ql, 2 high from qh, minus 32, times
// d · the group of 16's scale; each 128 values read 64 ql and 32 qh bytes in four interleaved runs.
void ggmlQ6_KBlock(const std::uint8_t* b, float* y) {
    const std::uint8_t* ql = b;
    const std::uint8_t* qh = b + 128;
    const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192);
    const float d = half(b + 208);
    for (int n = 0; n < kQKK; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
            y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
            y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
            y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
        }
    }
}

namespace {

using BlockKernel = void (*)(const std::uint8_t*, float*);

BlockKernel blockKernel(GgmlType type) {
    switch (type) {
        case GgmlType::Q4_0: return q4_0;
        case GgmlType::Q4_1: return q4_1;
        case GgmlType::Q5_0: return q5_0;
        case GgmlType::Q5_1: return q5_1;
        case GgmlType::Q8_0: return q8_0;
        case GgmlType::Q2_K: return q2_K;
        case GgmlType::Q3_K: return q3_K;
        case GgmlType::Q4_K: return q4_K;
        case GgmlType::Q5_K: return q5_K;
        case GgmlType::Q6_K: return ggmlQ6_KBlock;
        default: return nullptr;
    }
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
bool dequantizeAvx2(GgmlType type, const std::uint8_t* src, std::int64_t blocks, float* out) {
    switch (type) {
        case GgmlType::Q8_0: dequantizeQ8_0Avx2(src, blocks, out); return true;
        case GgmlType::Q4_K: dequantizeQ4_KAvx2(src, blocks, out); return true;
        case GgmlType::Q6_K: dequantizeQ6_KAvx2(src, blocks, out); return true;
        default: return false;
    }
}
#endif

}  // namespace

bool ggmlTypeDequantizable(std::uint32_t type) {
    const auto t = static_cast<GgmlType>(type);
    return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16 || blockKernel(t) != nullptr;
}

bool dequantizeGgml(std::uint32_t type, const std::uint8_t* src, std::int64_t elements, float* out) {
    const auto t = static_cast<GgmlType>(type);
    switch (t) {
        case GgmlType::F32: std::memcpy(out, src, static_cast<std::size_t>(elements) * 4); return true;
        case GgmlType::F16:
            for (std::int64_t i = 0; i < elements; ++i) out[i] = halfToFloat(loadU16(src + 2 * i));
            return true;
        case GgmlType::BF16:
            for (std::int64_t i = 0; i < elements; ++i) out[i] = bf16ToFloat(loadU16(src + 2 * i));
            return true;
        default: break;
    }
    const BlockKernel kernel = blockKernel(t);
    std::int64_t blockElements = 0, blockBytes = 0;
    if (kernel == nullptr || !ggmlBlockLayout(type, blockElements, blockBytes)) return false;
    const std::int64_t blocks = elements / blockElements;
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma() && dequantizeAvx2(t, src, blocks, out)) return true;
#endif
    for (std::int64_t i = 0; i < blocks; ++i) kernel(src + i * blockBytes, out + i * blockElements);
    return true;
}

}  // namespace attnscope::engine
