#include "checkpoint/stored_matvec.h"

#include "checkpoint/ggml_dequant.h"
#include "core/worker_threads.h"
#include "kernels/cpu_features.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace attnscope::engine {

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
float dotProductAvx2(const float* a, const float* b, std::int64_t n);
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

void storedMatMul(const StoredMatrix& m, const float* x, std::int64_t count, float* y) {
    constexpr std::int64_t kRowsPerItem = 32;
    const std::int64_t items = (m.rows + kRowsPerItem - 1) / kRowsPerItem;
    const int workers = std::max(1, std::min<int>(kernelThreads(), static_cast<int>(items)));
    std::vector<std::vector<float>> rowBuffers(static_cast<std::size_t>(workers), std::vector<float>(static_cast<std::size_t>(m.cols)));
    // a product of one small vector is too short to share: one thread
    const bool share = m.rows * m.cols * count >= (std::int64_t{1} << 16);
    auto body = [&](std::int64_t item, int worker) {
        float* row = rowBuffers[static_cast<std::size_t>(worker)].data();
        const std::int64_t r0 = item * kRowsPerItem, r1 = std::min(m.rows, r0 + kRowsPerItem);
        for (std::int64_t r = r0; r < r1; ++r) {
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
