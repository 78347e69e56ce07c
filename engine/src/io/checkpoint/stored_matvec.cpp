#include "io/checkpoint/stored_matvec.h"

#include "io/checkpoint/ggml_dequant.h"
#include "io/checkpoint/gguf_file.h"
#include "base/runtime/worker_threads.h"
#include "base/kernels/cpu_features.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace attnscope::engine {

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
float dotProductAvx2(const float* a, const float* b, std::int64_t n);
float dotQ8_0Avx2(const std::uint8_t* row, const float* x, std::int64_t cols);
float dotQ4_KAvx2(const std::uint8_t* row, const float* x, const float* sums32, std::int64_t cols);
float dotQ6_KAvx2(const std::uint8_t* row, const float* x, const float* sums16, std::int64_t cols);
#endif

float dotProduct(const float* a, const float* b, std::int64_t n) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) return dotProductAvx2(a, b, n);
#endif
    float sums[8] = {};
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) sums[k] += a[i + k] * b[i + k];
    float total = 0;
    for (; i < n; ++i) total += a[i] * b[i];
    for (int k = 0; k < 8; ++k) total += sums[k];
    return total;
}

namespace {

// llama.cpp's row (h, i, half) of a head of d rows is Hugging Face's (h, half, i).
void unpermute(float* y, std::int64_t heads, std::int64_t rows) {
    const std::int64_t d = rows / heads, halfD = d / 2;
    std::vector<float> stored(y, y + rows);
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t half = 0; half < 2; ++half)
            for (std::int64_t i = 0; i < halfD; ++i) y[h * d + half * halfD + i] = stored[static_cast<std::size_t>(h * d + 2 * i + half)];
}

}  // namespace

// The formats most GGUF files hold (Q8_0, and the Q4_K and Q6_K of Q4_K_M) are dotted with x
// straight from their blocks: each group's scale applied once to Σ q·x, its minimum (or offset)
// to the group's Σ x computed once per vector — half the work of dequantizing then dotting.
struct FusedRows {
    std::int64_t groupWidth = 0;        ///< 32 (Q4_K), 16 (Q6_K), 0 (Q8_0: none needed)
    std::vector<float> sums;            ///< [count, cols / groupWidth]
};

bool fusedDotType(const StoredMatrix& m) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    const auto t = static_cast<GgmlType>(m.type);
    return haveAvx2Fma() && (t == GgmlType::Q8_0 || t == GgmlType::Q4_K || t == GgmlType::Q6_K);
#else
    (void)m;
    return false;
#endif
}

FusedRows groupSums(const StoredMatrix& m, const float* x, std::int64_t count) {
    FusedRows f;
    const auto t = static_cast<GgmlType>(m.type);
    f.groupWidth = t == GgmlType::Q4_K ? 32 : t == GgmlType::Q6_K ? 16 : 0;
    if (f.groupWidth == 0) return f;
    const std::int64_t groups = m.cols / f.groupWidth;
    f.sums.assign(static_cast<std::size_t>(count * groups), 0.0f);
    for (std::int64_t c = 0; c < count; ++c)
        for (std::int64_t g = 0; g < groups; ++g) {
            float s = 0;
            for (std::int64_t j = 0; j < f.groupWidth; ++j) s += x[c * m.cols + g * f.groupWidth + j];
            f.sums[static_cast<std::size_t>(c * groups + g)] = s;
        }
    return f;
}

float fusedDot(const StoredMatrix& m, const std::uint8_t* row, const float* x, const float* sums) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    switch (static_cast<GgmlType>(m.type)) {
        case GgmlType::Q8_0: return dotQ8_0Avx2(row, x, m.cols);
        case GgmlType::Q4_K: return dotQ4_KAvx2(row, x, sums, m.cols);
        case GgmlType::Q6_K: return dotQ6_KAvx2(row, x, sums, m.cols);
        default: break;
    }
#endif
    (void)m, (void)row, (void)x, (void)sums;
    return 0;
}

void storedMatMul(const StoredMatrix& m, const float* x, std::int64_t count, float* y) {
    constexpr std::int64_t kRowsPerItem = 32;
    const std::int64_t items = (m.rows + kRowsPerItem - 1) / kRowsPerItem;
    const int workers = std::max(1, std::min<int>(kernelThreads(), static_cast<int>(items)));
    std::vector<std::vector<float>> rowBuffers(static_cast<std::size_t>(workers), std::vector<float>(static_cast<std::size_t>(m.cols)));
    // a product of one small vector is too short to share: one thread
    const bool share = m.rows * m.cols * count >= (std::int64_t{1} << 16);
    const bool fused = fusedDotType(m);
    const FusedRows sums = fused ? groupSums(m, x, count) : FusedRows{};
    const std::int64_t groups = sums.groupWidth > 0 ? m.cols / sums.groupWidth : 0;
    auto body = [&](std::int64_t item, int worker) {
        float* row = rowBuffers[static_cast<std::size_t>(worker)].data();
        const std::int64_t r0 = item * kRowsPerItem, r1 = std::min(m.rows, r0 + kRowsPerItem);
        for (std::int64_t r = r0; r < r1 && fused; ++r)
            for (std::int64_t c = 0; c < count; ++c)
                y[c * m.rows + r] = fusedDot(m, m.bytes + static_cast<std::uint64_t>(r) * m.rowBytes, x + c * m.cols,
                                             sums.sums.empty() ? nullptr : sums.sums.data() + c * groups);
        for (std::int64_t r = r0; r < r1 && !fused; ++r) {
            dequantizeGgml(m.type, m.bytes + static_cast<std::uint64_t>(r) * m.rowBytes, m.cols, row);
            for (std::int64_t c = 0; c < count; ++c) y[c * m.rows + r] = dotProduct(row, x + c * m.cols, m.cols);
        }
    };
    if (share) {
        forEachItem(items, body);
    } else {
        for (std::int64_t item = 0; item < items; ++item) body(item, 0);
    }
    if (m.permuteHeads > 0)
        for (std::int64_t c = 0; c < count; ++c) unpermute(y + c * m.rows, m.permuteHeads, m.rows);
}

}  // namespace attnscope::engine
