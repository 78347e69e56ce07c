#include "kernels/column_similarities.h"

#include "core/worker_threads.h"
#include "kernels/cpu_features.h"

#include <algorithm>

namespace attnscope::engine {

namespace {

// Columns per block: the block of B transposed (depth × 256 floats) stays in cache across rows.
constexpr std::int64_t kBlockColumns = 256;

// o[j] += ak · bk[j]: a multiply and an add per element (never fused), so every column gets the
// same correctly rounded operations in the same order whatever the vector width.
inline void addScaledRow(float* o, float ak, const float* bk, std::int64_t width) {
    for (std::int64_t j = 0; j < width; ++j) o[j] += ak * bk[j];
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
// The same loop in 8-wide registers (AVX2 without FMA: the products are not fused into the adds).
__attribute__((target("avx2"))) void addScaledRowAvx2(float* o, float ak, const float* bk, std::int64_t width) {
    for (std::int64_t j = 0; j < width; ++j) o[j] += ak * bk[j];
}
#endif

// Columns j0 .. j0 + width of every row of out; bt: the block's depth × width scratch.
void similarityBlock(const float* a, std::int64_t rows, const float* b, std::int64_t columns, std::int64_t depth,
                     std::int64_t j0, std::int64_t width, float* out, float* bt) {
    for (std::int64_t j = 0; j < width; ++j)
        for (std::int64_t k = 0; k < depth; ++k) bt[k * width + j] = b[(j0 + j) * depth + k];
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    const bool avx2 = haveAvx2Fma();
#endif
    for (std::int64_t r = 0; r < rows; ++r) {
        float* o = out + r * columns + j0;
        std::fill(o, o + width, 0.0f);
        // (the inner loop runs across columns, so vectorising it gives every column the same
        // multiply and add in the same order: no reassociation across k)
        for (std::int64_t k = 0; k < depth; ++k) {
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
            if (avx2) {
                addScaledRowAvx2(o, a[r * depth + k], bt + k * width, width);
                continue;
            }
#endif
            addScaledRow(o, a[r * depth + k], bt + k * width, width);
        }
    }
}

}  // namespace

void columnSimilarities(const float* a, std::int64_t rows, const float* b, std::int64_t columns, std::int64_t depth,
                        float* out) {
    const std::int64_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
    std::vector<std::vector<float>> scratch(static_cast<std::size_t>(kernelThreads()));
    forEachItem(blocks, [&](std::int64_t block, int worker) {
        std::vector<float>& bt = scratch[static_cast<std::size_t>(worker)];
        bt.resize(static_cast<std::size_t>(depth * kBlockColumns));
        const std::int64_t j0 = block * kBlockColumns;
        similarityBlock(a, rows, b, columns, depth, j0, std::min(kBlockColumns, columns - j0), out, bt.data());
    });
}

}  // namespace attnscope::engine
