#include "variants/shared/dense_rows.h"

#include "kernels/blas_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace attnscope::engine {

void runDenseRows(const Qkv& qkv, const DenseRowInput& input, const DenseRowFn& rowFn, RunContext& ctx,
                  AttentionResult& result) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d();
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    const std::int64_t offset = m - n;  // causal: key j visible iff j <= i + offset (as `full`)
    const bool padQueries = !qkv.keyPadding.empty() && n == m;
    const std::int64_t block = std::clamp<std::int64_t>((2 << 20) / (4 * std::max<std::int64_t>(m, 1)), 32, 256);

    ctx.beginStage("attention");
    auto outBuffer = ctx.pool().resultBuffer(input.slot + ".output", static_cast<std::size_t>(heads * n * d));
    std::vector<float> scores(static_cast<std::size_t>(block * m));
    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    std::int64_t emptyRows = 0;
    const std::int64_t blocks = (n + block - 1) / block;

    for (std::int64_t h = 0; h < heads; ++h) {
        for (std::int64_t bi = 0; bi < blocks; ++bi) {
            const std::int64_t i0 = bi * block, rows = std::min(block, n - i0);
            // scores: [rows, m] = Q_block K^T, then masked keys -inf
            const float* qh = qkv.q.data.get() + (h * n + i0) * d;
            gemmRowMajor(true, rows, m, d, qh, d, qkv.k.data.get() + h * m * d, d, scores.data(), m);
            for (std::int64_t r = 0; r < rows; ++r) {
                const std::int64_t i = i0 + r;
                float* row = scores.data() + r * m;
                std::uint8_t& st = status.u8[static_cast<std::size_t>(h * n + i)];
                bool any = false;
                for (std::int64_t j = 0; j < m; ++j) {
                    if ((input.causal && j > i + offset) || (!qkv.keyPadding.empty() && qkv.keyPadding[static_cast<std::size_t>(j)]))
                        row[j] = -std::numeric_limits<float>::infinity();
                    else
                        any = true;
                }
                if (padQueries && qkv.keyPadding[static_cast<std::size_t>(i)]) {
                    st = 2;
                    std::fill(row, row + m, 0.0f);
                } else if (!any) {
                    st = 1;
                    ++emptyRows;
                    std::fill(row, row + m, 0.0f);
                } else {
                    rowFn(static_cast<int>(h), i, row, scale);
                }
            }
            gemmRowMajor(false, rows, d, m, scores.data(), m, qkv.v.data.get() + h * m * d, d, outBuffer->data() + (h * n + i0) * d, d);
            ctx.counters().flops += 4.0 * static_cast<double>(rows) * m * d;
            ctx.counters().entriesComputed += rows * m;
            ctx.checkpoint("attention", h * blocks + bi + 1, heads * blocks);
        }
    }
    ctx.endStage();

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.emptyRowCount = emptyRows;
    keepRowStatus(std::move(status), result, ctx);
    ctx.noteBytes(outBuffer->size() * 4 + static_cast<std::uint64_t>(scores.size()) * 4);
    result.counters = ctx.counters();
}

}  // namespace attnscope::engine
