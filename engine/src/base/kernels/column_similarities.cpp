#include "base/kernels/column_similarities.h"

#include "base/runtime/worker_threads.h"
#include "base/kernels/cpu_features.h"

#include <algorithm>

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace attnscope::engine {

namespace {

// Columns per block: the block of B transposed (depth × 256 floats) stays in cache across rows.
constexpr std::int64_t kBlockColumns = 256;

// One output element's sum, the order every path keeps: k ascending, a multiply then an add
// (never fused), so equal columns of B give equal bits wherever they sit.
void similaritySpan(const float* a, std::int64_t r0, std::int64_t r1, const float* bt, std::int64_t width, std::int64_t c0,
                    std::int64_t c1, std::int64_t depth, float* out, std::int64_t outStride) {
    for (std::int64_t r = r0; r < r1; ++r) {
        float* o = out + r * outStride;
        std::fill(o + c0, o + c1, 0.0f);
        for (std::int64_t k = 0; k < depth; ++k) {
            const float ak = a[r * depth + k];
            const float* bk = bt + k * width;
            for (std::int64_t j = c0; j < c1; ++j) o[j] += ak * bk[j];
        }
    }
}

#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
// 4 rows × 16 columns held in registers across the whole depth: the same multiply and add per
// element, in the same order, as similaritySpan (AVX2 without FMA), at the registers' rate
// rather than one load and store of the output per k.
__attribute__((target("avx2"))) void similarityTile4x16(const float* a, std::int64_t r0, const float* bt, std::int64_t width,
                                                         std::int64_t c0, std::int64_t depth, float* out,
                                                         std::int64_t outStride) {
    __m256 acc[4][2];
    for (auto& row : acc) row[0] = row[1] = _mm256_setzero_ps();
    const float* a0 = a + r0 * depth;
    for (std::int64_t k = 0; k < depth; ++k) {
        const __m256 b0 = _mm256_loadu_ps(bt + k * width + c0), b1 = _mm256_loadu_ps(bt + k * width + c0 + 8);
        for (int r = 0; r < 4; ++r) {
            const __m256 ak = _mm256_broadcast_ss(a0 + r * depth + k);
            acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_mul_ps(ak, b0));
            acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_mul_ps(ak, b1));
        }
    }
    for (int r = 0; r < 4; ++r) {
        _mm256_storeu_ps(out + (r0 + r) * outStride + c0, acc[r][0]);
        _mm256_storeu_ps(out + (r0 + r) * outStride + c0 + 8, acc[r][1]);
    }
}
#endif

// Columns j0 .. j0 + width of every row of out; bt: the block's depth × width scratch.
void similarityBlock(const float* a, std::int64_t rows, const float* b, std::int64_t columns, std::int64_t depth,
                     std::int64_t j0, std::int64_t width, float* out, float* bt) {
    for (std::int64_t j = 0; j < width; ++j)
        for (std::int64_t k = 0; k < depth; ++k) bt[k * width + j] = b[(j0 + j) * depth + k];
    float* outBlock = out + j0;
    std::int64_t tiledRows = 0, tiledColumns = 0;
#ifdef ATTNSCOPE_HAVE_AVX2_KERNELS
    if (haveAvx2Fma()) {
        tiledRows = rows / 4 * 4;
        tiledColumns = width / 16 * 16;
        for (std::int64_t r0 = 0; r0 < tiledRows; r0 += 4)
            for (std::int64_t c0 = 0; c0 < tiledColumns; c0 += 16)
                similarityTile4x16(a, r0, bt, width, c0, depth, outBlock, columns);
    }
#endif
    similaritySpan(a, 0, tiledRows, bt, width, tiledColumns, width, depth, outBlock, columns);
    similaritySpan(a, tiledRows, rows, bt, width, 0, width, depth, outBlock, columns);
}

// Column block `block` (kBlockColumns wide, the last one narrower), bt resized as its scratch.
void similarityOfBlock(const float* a, std::int64_t rows, const float* b, std::int64_t columns, std::int64_t depth, float* out,
                      std::int64_t block, std::vector<float>& bt) {
    bt.resize(static_cast<std::size_t>(depth * kBlockColumns));
    const std::int64_t j0 = block * kBlockColumns;
    similarityBlock(a, rows, b, columns, depth, j0, std::min(kBlockColumns, columns - j0), out, bt.data());
}

}  // namespace

void columnSimilarities(const float* a, std::int64_t rows, const float* b, std::int64_t columns, std::int64_t depth,
                        float* out) {
    const std::int64_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
    std::vector<std::vector<float>> scratch(static_cast<std::size_t>(kernelThreads()));
    forEachItem(blocks, [&](std::int64_t block, int worker) {
        similarityOfBlock(a, rows, b, columns, depth, out, block, scratch[static_cast<std::size_t>(worker)]);
    });
}

void columnSimilaritiesOnThisThread(const float* a, std::int64_t rows, const float* b, std::int64_t columns,
                                    std::int64_t depth, float* out) {
    std::vector<float> bt;
    for (std::int64_t block = 0; block * kBlockColumns < columns; ++block) similarityOfBlock(a, rows, b, columns, depth, out, block, bt);
}

}  // namespace attnscope::engine
