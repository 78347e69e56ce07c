#include "kernels/column_similarities.h"

#include <algorithm>

namespace attnscope::engine {

namespace {

// Columns per block: the block of B transposed (depth × 256 floats) stays in cache across rows.
constexpr std::int64_t kBlockColumns = 256;

}  // namespace

void columnSimilarities(const float* a, std::int64_t rows, const float* b, std::int64_t columns, std::int64_t depth,
                        float* out, std::vector<float>& scratch) {
    scratch.resize(static_cast<std::size_t>(depth * kBlockColumns));
    for (std::int64_t j0 = 0; j0 < columns; j0 += kBlockColumns) {
        const std::int64_t width = std::min(kBlockColumns, columns - j0);
        float* bt = scratch.data();
        for (std::int64_t j = 0; j < width; ++j)
            for (std::int64_t k = 0; k < depth; ++k) bt[k * width + j] = b[(j0 + j) * depth + k];
        for (std::int64_t r = 0; r < rows; ++r) {
            float* o = out + r * columns + j0;
            std::fill(o, o + width, 0.0f);
            // (the inner loop runs across columns, so vectorising it gives every column the same
            // multiply and add in the same order: no reassociation across k)
            for (std::int64_t k = 0; k < depth; ++k) {
                const float ak = a[r * depth + k];
                const float* bk = bt + k * width;
                for (std::int64_t j = 0; j < width; ++j) o[j] += ak * bk[j];
            }
        }
    }
}

}  // namespace attnscope::engine
