// ggml's block formats dequantized: one block of each, its bytes set by hand and the values worked
// out here from the format's definition; then the AVX2 kernels against the portable ones, bit for
// bit, on many random blocks.

#include "io/checkpoint/ggml_dequant.h"
#include "io/checkpoint/gguf_file.h"
#include "io/checkpoint/stored_matvec.h"

#include <attnscope/kernel_path.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace attnscope::engine;

namespace {

constexpr std::uint16_t kHalfQuarter = 0x3400, kHalfHalf = 0x3800, kHalfOne = 0x3C00, kHalfTwo = 0x4000, kHalfMinusOne = 0xBC00;

void putHalf(std::vector<std::uint8_t>& b, std::size_t at, std::uint16_t h) {
    b[at] = static_cast<std::uint8_t>(h & 0xFF);
    b[at + 1] = static_cast<std::uint8_t>(h >> 8);
}

std::vector<float> dequantized(GgmlType type, const std::vector<std::uint8_t>& block) {
    std::int64_t elements = 0, bytes = 0;
    EXPECT_TRUE(ggmlBlockLayout(static_cast<std::uint32_t>(type), elements, bytes));
    EXPECT_EQ(static_cast<std::size_t>(bytes), block.size());
    std::vector<float> out(static_cast<std::size_t>(elements), -999.0f);
    EXPECT_TRUE(dequantizeGgml(static_cast<std::uint32_t>(type), block.data(), elements, out.data()));
    return out;
}

}  // namespace

TEST(GgmlDequant, Q4_0NibblesMinusEightTimesTheScale) {
    std::vector<std::uint8_t> b(18, 0x88);  // every nibble 8: value 0
    putHalf(b, 0, kHalfHalf);
    b[2] = 0x1F;  // value 0: low nibble 15 → (15 − 8) · 0.5; value 16: high nibble 1 → (1 − 8) · 0.5
    const auto y = dequantized(GgmlType::Q4_0, b);
    EXPECT_EQ(y[0], 3.5f);
    EXPECT_EQ(y[16], -3.5f);
    EXPECT_EQ(y[1], 0.0f);
    EXPECT_EQ(y[31], 0.0f);
}

TEST(GgmlDequant, Q4_1NibblesTimesScalePlusMinimum) {
    std::vector<std::uint8_t> b(20, 0);
    putHalf(b, 0, kHalfTwo);
    putHalf(b, 2, kHalfMinusOne);
    b[4] = 0x30;  // value 0: 0 · 2 − 1; value 16: 3 · 2 − 1
    const auto y = dequantized(GgmlType::Q4_1, b);
    EXPECT_EQ(y[0], -1.0f);
    EXPECT_EQ(y[16], 5.0f);
    EXPECT_EQ(y[5], -1.0f);
}

TEST(GgmlDequant, Q5_0FifthBitFromQhMinusSixteen) {
    std::vector<std::uint8_t> b(22, 0);
    putHalf(b, 0, kHalfOne);
    const std::uint32_t qh = 0x00010001u;  // bit 0: value 0's fifth bit; bit 16: value 16's
    std::memcpy(b.data() + 2, &qh, 4);
    b[6] = 0x21;
    const auto y = dequantized(GgmlType::Q5_0, b);
    EXPECT_EQ(y[0], 1.0f);    // (1 | 16) − 16
    EXPECT_EQ(y[16], 2.0f);   // (2 | 16) − 16
    EXPECT_EQ(y[1], -16.0f);  // (0 | 0) − 16
    EXPECT_EQ(y[17], -16.0f);
}

TEST(GgmlDequant, Q5_1FifthBitTimesScalePlusMinimum) {
    std::vector<std::uint8_t> b(24, 0);
    putHalf(b, 0, kHalfHalf);
    putHalf(b, 2, kHalfOne);
    const std::uint32_t qh = 0x00000001u;
    std::memcpy(b.data() + 4, &qh, 4);
    b[8] = 0xF0;
    const auto y = dequantized(GgmlType::Q5_1, b);
    EXPECT_EQ(y[0], 9.0f);    // (0 | 16) · 0.5 + 1
    EXPECT_EQ(y[16], 8.5f);   // (15 | 0) · 0.5 + 1
    EXPECT_EQ(y[1], 1.0f);
}

TEST(GgmlDequant, Q8_0SignedBytesTimesTheScale) {
    std::vector<std::uint8_t> b(34, 0);
    putHalf(b, 0, kHalfQuarter);
    b[2] = 0x80;   // −128
    b[33] = 0x7F;  // 127
    b[10] = 0xFF;  // −1
    const auto y = dequantized(GgmlType::Q8_0, b);
    EXPECT_EQ(y[0], -32.0f);
    EXPECT_EQ(y[31], 31.75f);
    EXPECT_EQ(y[8], -0.25f);
    EXPECT_EQ(y[1], 0.0f);
}

TEST(GgmlDequant, Q2_KTwoBitsWithScaleAndMinPerSixteen) {
    std::vector<std::uint8_t> b(84, 0);
    b[0] = 0x21;  // group 0 (values 0–15): scale 1, min 2
    b[2] = 0x13;  // group 2 (values 32–47, bits 2–3 of qs 0–15): scale 3, min 1
    b[16] = 0xE4; // qs[0]: bits 0–1 = 0, bits 2–3 = 1
    putHalf(b, 80, kHalfOne);
    putHalf(b, 82, kHalfHalf);
    const auto y = dequantized(GgmlType::Q2_K, b);
    EXPECT_EQ(y[0], -1.0f);   // 1 · 1 · 0 − 0.5 · 2
    EXPECT_EQ(y[32], 2.5f);   // 1 · 3 · 1 − 0.5 · 1
    EXPECT_EQ(y[64], 0.0f);   // group 4: scale 0, min 0
}

TEST(GgmlDequant, Q3_KThirdBitFromHmaskAndSixBitScales) {
    std::vector<std::uint8_t> b(110, 0);
    b[0] = 0x01;   // hmask[0]: value 0's third bit set (first pass, bit 0); value 128's clear (bit 4)
    b[32] = 0x02;  // qs[0]: value 0's two low bits = 2
    b[96] = 0x03;  // scale 0's low nibble 3 ...
    b[104] = 0x02; // ... and its high bits 2: 3 | 32 = 35, minus 32 = 3
    putHalf(b, 108, kHalfHalf);
    const auto y = dequantized(GgmlType::Q3_K, b);
    EXPECT_EQ(y[0], 3.0f);     // 0.5 · 3 · (2 − 0)
    EXPECT_EQ(y[1], -6.0f);    // 0.5 · 3 · (0 − 4): hmask clear
    EXPECT_EQ(y[128], 64.0f);  // scale 8 = 0 − 32: 0.5 · −32 · (0 − 4)
}

TEST(GgmlDequant, Q4_KSixBitScalesAndMinsPerThirtyTwo) {
    std::vector<std::uint8_t> b(144, 0);
    putHalf(b, 0, kHalfOne);
    putHalf(b, 2, kHalfOne);
    b[4] = 0x45;   // scale 0 = 5; its top bits (1) are scale 4's high bits
    b[8] = 0x82;   // min 0 = 2; its top bits (2) are min 4's high bits
    b[12] = 0x31;  // scale 4 = 1 | 1 << 4 = 17, min 4 = 3 | 2 << 4 = 35
    b[16] = 0x7A;  // value 0: 10; value 32: 7 (group 1: scale 0, min 0)
    b[16 + 64] = 0x03;  // value 128 (group 4): 3
    const auto y = dequantized(GgmlType::Q4_K, b);
    EXPECT_EQ(y[0], 48.0f);    // 5 · 10 − 2
    EXPECT_EQ(y[32], 0.0f);
    EXPECT_EQ(y[128], 16.0f);  // 17 · 3 − 35
}

TEST(GgmlDequant, Q5_KFifthBitFromQhPerGroup) {
    std::vector<std::uint8_t> b(176, 0);
    putHalf(b, 0, kHalfOne);
    putHalf(b, 2, kHalfOne);
    b[4] = 0x05;  // scale 0 = 5
    b[5] = 0x01;  // scale 1 = 1
    b[8] = 0x02;  // min 0 = 2
    b[9] = 0x01;  // min 1 = 1
    b[16] = 0x01; // qh[0]: bit 0 (group 0's fifth bit) set, bit 1 (group 1's) clear
    b[48] = 0x7A; // ql[0]: value 0 low nibble 10, value 32 high nibble 7
    const auto y = dequantized(GgmlType::Q5_K, b);
    EXPECT_EQ(y[0], 128.0f);  // 5 · (10 + 16) − 2
    EXPECT_EQ(y[32], 6.0f);   // 1 · 7 − 1
    EXPECT_EQ(y[1], -2.0f);   // 5 · 0 − 2
}

TEST(GgmlDequant, Q6_KSixBitsMinusThirtyTwoTimesSignedScales) {
    std::vector<std::uint8_t> b(210, 0);
    b[0] = 0x21;    // ql[0]: value 0's low 4 bits 1, value 64's 2
    b[128] = 0x07;  // qh[0]: value 0's high bits 3, value 32's 1, value 64's 0
    b[192] = 2;     // scale of values 0–15
    b[194] = 0xFF;  // scale of values 32–47: −1
    b[196] = 3;     // scale of values 64–79
    putHalf(b, 208, kHalfHalf);
    const auto y = dequantized(GgmlType::Q6_K, b);
    EXPECT_EQ(y[0], 17.0f);    // 0.5 · 2 · ((1 | 48) − 32)
    EXPECT_EQ(y[32], 8.0f);    // 0.5 · −1 · ((0 | 16) − 32)
    EXPECT_EQ(y[64], -45.0f);  // 0.5 · 3 · ((2 | 0) − 32)
}

TEST(GgmlDequant, FloatTypesConvertExactly) {
    const std::vector<std::uint8_t> f16 = {0x00, 0x3C, 0x00, 0xC0};     // 1, −2
    const std::vector<std::uint8_t> bf16 = {0x80, 0x3F, 0x40, 0xC0};    // 1, −3
    float out[2];
    ASSERT_TRUE(dequantizeGgml(static_cast<std::uint32_t>(GgmlType::F16), f16.data(), 2, out));
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], -2.0f);
    ASSERT_TRUE(dequantizeGgml(static_cast<std::uint32_t>(GgmlType::BF16), bf16.data(), 2, out));
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], -3.0f);
}

TEST(GgmlDequant, TypesWithoutAKernelAreRefused) {
    float out[256];
    std::vector<std::uint8_t> block(256, 0);
    for (GgmlType t : {GgmlType::IQ2_XXS, GgmlType::IQ4_NL, GgmlType::TQ1_0, GgmlType::Q8_K, GgmlType::I32}) {
        EXPECT_FALSE(ggmlTypeDequantizable(static_cast<std::uint32_t>(t)));
        EXPECT_FALSE(dequantizeGgml(static_cast<std::uint32_t>(t), block.data(), 256, out));
    }
    EXPECT_TRUE(ggmlTypeDequantizable(static_cast<std::uint32_t>(GgmlType::Q5_K)));
}

// Random bytes with finite half scales, every format: the fast path equals the portable one.
TEST(GgmlDequant, FastAndPortablePathsAgreeBitForBit) {
    std::mt19937 rng(7);
    const KernelPath before = kernelPath();
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K,
                       GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
        std::int64_t elements = 0, bytes = 0;
        ASSERT_TRUE(ggmlBlockLayout(static_cast<std::uint32_t>(t), elements, bytes));
        const std::int64_t blocks = 37;
        std::vector<std::uint8_t> data(static_cast<std::size_t>(bytes * blocks));
        for (auto& v : data) v = static_cast<std::uint8_t>(rng());
        for (std::int64_t i = 0; i < blocks; ++i)  // clear the top exponent bit of every 2-byte word: finite halves
            for (std::int64_t k = 1; k < bytes; k += 2) data[static_cast<std::size_t>(i * bytes + k)] &= 0xBF;
        std::vector<float> fast(static_cast<std::size_t>(elements * blocks)), portable(fast.size());
        setKernelPath(KernelPath::Fastest);
        ASSERT_TRUE(dequantizeGgml(static_cast<std::uint32_t>(t), data.data(), elements * blocks, fast.data()));
        setKernelPath(KernelPath::Portable);
        ASSERT_TRUE(dequantizeGgml(static_cast<std::uint32_t>(t), data.data(), elements * blocks, portable.data()));
        EXPECT_EQ(0, std::memcmp(fast.data(), portable.data(), fast.size() * sizeof(float))) << ggmlTypeName(static_cast<std::uint32_t>(t));
    }
    setKernelPath(before);
}

// Generation's products: the blocks dotted straight from storage (the fast path fuses Q8_0, Q4_K
// and Q6_K with the vector) equal the portable dequantize-then-dot within float rounding, and
// llama.cpp's q/k row order is undone on the product.
TEST(GgmlDequant, StoredProductsAgreeOnBothPathsAndUndoTheRowOrder) {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const KernelPath before = kernelPath();
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q5_K, GgmlType::BF16, GgmlType::F32}) {
        std::int64_t elements = 0, bytes = 0;
        ASSERT_TRUE(ggmlBlockLayout(static_cast<std::uint32_t>(t), elements, bytes));
        const std::int64_t rows = 8, cols = 512;
        std::vector<std::uint8_t> data(static_cast<std::size_t>(rows * cols / elements * bytes));
        for (auto& v : data) v = static_cast<std::uint8_t>(rng());
        for (std::size_t k = 1; k < data.size(); k += 2) data[k] &= 0xBB;  // finite halves, bfloat16s, floats of sane size
        std::vector<float> x(static_cast<std::size_t>(2 * cols));
        for (float& v : x) v = normal(rng);
        const StoredMatrix m{static_cast<std::uint32_t>(t), data.data(), rows, cols, static_cast<std::uint64_t>(cols / elements * bytes), 0};
        std::vector<float> fast(static_cast<std::size_t>(2 * rows)), portable(fast.size());
        setKernelPath(KernelPath::Fastest);
        storedMatMul(m, x.data(), 2, fast.data());
        setKernelPath(KernelPath::Portable);
        storedMatMul(m, x.data(), 2, portable.data());
        // an independent float64 product of the dequantized rows
        std::vector<float> w(static_cast<std::size_t>(rows * cols));
        ASSERT_TRUE(dequantizeGgml(static_cast<std::uint32_t>(t), data.data(), rows * cols, w.data()));
        for (std::int64_t c = 0; c < 2; ++c)
            for (std::int64_t r = 0; r < rows; ++r) {
                double expected = 0, scale = 0;
                for (std::int64_t j = 0; j < cols; ++j) {
                    expected += static_cast<double>(w[static_cast<std::size_t>(r * cols + j)]) * x[static_cast<std::size_t>(c * cols + j)];
                    scale += std::abs(static_cast<double>(w[static_cast<std::size_t>(r * cols + j)]) * x[static_cast<std::size_t>(c * cols + j)]);
                }
                const std::size_t at = static_cast<std::size_t>(c * rows + r);
                EXPECT_NEAR(fast[at], expected, 1e-5 * scale + 1e-30) << ggmlTypeName(static_cast<std::uint32_t>(t)) << " row " << r;
                EXPECT_NEAR(portable[at], expected, 1e-5 * scale + 1e-30) << ggmlTypeName(static_cast<std::uint32_t>(t)) << " row " << r;
            }
    }
    // two heads of 4 rows stored as llama.cpp orders them: (h, i, half) → Hugging Face's (h, half, i)
    std::vector<float> identity(8 * 8, 0.0f);
    for (int r = 0; r < 8; ++r) identity[static_cast<std::size_t>(r * 8 + r)] = 1.0f;
    StoredMatrix permuted{static_cast<std::uint32_t>(GgmlType::F32), reinterpret_cast<const std::uint8_t*>(identity.data()), 8, 8, 32, 2};
    std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7}, y(8);
    setKernelPath(before);
    storedMatMul(permuted, x.data(), 1, y.data());
    EXPECT_EQ(y, (std::vector<float>{0, 2, 1, 3, 4, 6, 5, 7}));
}
