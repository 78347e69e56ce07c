#include "attention/variants/shared/dense_rows.h"

#include "base/kernels/parallel_heads.h"
#include "base/kernels/blas_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace attnscope::engine {

int denseRowWorkers(std::int64_t heads) { return headWorkers(heads); }

void runDenseRows(const Qkv& qkv, const DenseRowInput& input, const DenseRowFn& rowFn, RunContext& ctx,
                  AttentionResult& result) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d();
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    const std::int64_t offset = m - n;  // causal: key j visible iff j <= i + offset (as `full`)
    const bool padQueries = !qkv.keyPadding.empty() && n == m;
    const std::int64_t block = std::clamp<std::int64_t>((2 << 20) / (4 * std::max<std::int64_t>(m, 1)), 32, 256);

    ctx.beginStage("attention");
    auto outBuffer = ctx.pool().resultBuffer(input.slot + ".output", static_cast<std::size_t>(heads * n * d));
    std::vector<std::vector<float>> scores(static_cast<std::size_t>(denseRowWorkers(heads)));
    for (auto& s : scores) s.resize(static_cast<std::size_t>(block * m));
    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    std::vector<std::int64_t> emptyPerHead(static_cast<std::size_t>(heads), 0);
    // one head per worker at a time, each with its own block of scores (the products single-threaded)
    forEachHead(heads, "attention", ctx, [&](std::int64_t h, int worker) {
        float* block0 = scores[static_cast<std::size_t>(worker)].data();
        for (std::int64_t i0 = 0; i0 < n; i0 += block) {
            const std::int64_t rows = std::min(block, n - i0);
            // scores: [rows, m] = Q_block K^T, then masked keys -inf
            const float* qh = qkv.q.data.get() + (h * n + i0) * d;
            gemmRowMajor(true, rows, m, d, qh, d, qkv.k.data.get() + h * m * d, d, block0, m);
            for (std::int64_t r = 0; r < rows; ++r) {
                const std::int64_t i = i0 + r;
                float* row = block0 + r * m;
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
                    ++emptyPerHead[static_cast<std::size_t>(h)];
                    std::fill(row, row + m, 0.0f);
                } else {
                    rowFn(static_cast<int>(h), i, row, scale, worker);
                }
            }
            gemmRowMajor(false, rows, d, m, block0, m, qkv.v.data.get() + h * m * d, d, outBuffer->data() + (h * n + i0) * d, d);
        }
    });
    ctx.endStage();

    std::int64_t emptyRows = 0;
    for (std::int64_t e : emptyPerHead) emptyRows += e;
    ctx.counters().flops += 4.0 * static_cast<double>(heads * n) * static_cast<double>(m) * static_cast<double>(d);
    ctx.counters().entriesComputed += heads * n * m;
    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.emptyRowCount = emptyRows;
    keepRowStatus(std::move(status), result, ctx);
    ctx.noteBytes(outBuffer->size() * 4 + scores.size() * static_cast<std::uint64_t>(block * m) * 4);
    result.counters = ctx.counters();
}

}  // namespace attnscope::engine
