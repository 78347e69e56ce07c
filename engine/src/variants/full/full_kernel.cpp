// `full`: exact softmax attention (Vaswani et al. 2017), the baseline every variant is measured
// against. Computed in blocks of query rows, so memory is O(block * m) besides the output and the
// row log-sum-exp that every weight is recomputed from; the two products per block run in the
// BLAS SGEMM.

#include "core_torch/tensor_views.h"
#include "kernels/softmax_kernel.h"
#include "variants/variant.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnscope::engine {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// Rows per block: enough for SGEMM to reach its rate, small enough that a block of scores
// (rows x m floats) stays in the last-level cache.
std::int64_t blockRows(std::int64_t m) {
    const std::int64_t target = (2 << 20) / (4 * std::max<std::int64_t>(m, 1));
    return std::clamp<std::int64_t>(target, 32, 256);
}

class FullAttention final : public Variant {
public:
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues&) const override {
        // output, lse and row status; one block of scores
        return static_cast<std::uint64_t>(s.heads * s.n * (s.d * 4 + 5) + blockRows(s.m) * s.m * 4);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
};

AttentionResult FullAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d();
    const bool causal = paramBool(params, "causal");
    // Causal with m > n aligns queries to the last n keys (key j visible iff j <= i + offset).
    const std::int64_t offset = m - n;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    AttentionResult result = startResult(info().id, params, qkv);

    ctx.beginStage("attention");
    auto outBuffer = ctx.pool().resultBuffer("full.output", static_cast<std::size_t>(heads * n * d));
    at::Tensor out = tensorOver(*outBuffer, {heads, n, d});
    const std::int64_t block = blockRows(m);
    at::Tensor scratch = workspace(ctx.pool(), "full.scores", {block, m});

    std::vector<std::int64_t> paddedKeys;
    for (std::int64_t j = 0; j < static_cast<std::int64_t>(qkv.keyPadding.size()); ++j)
        if (qkv.keyPadding[j]) paddedKeys.push_back(j);
    const bool padQueries = !qkv.keyPadding.empty() && n == m;

    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    PlainTensor rowShift = ctx.pool().zeros(DType::F32, {heads, n}), rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    std::int64_t emptyRows = 0;
    const std::int64_t blocksPerHead = (n + block - 1) / block;
    double flops = 0;
    std::int64_t entries = 0;

    for (std::int64_t h = 0; h < heads; ++h) {
        const at::Tensor qh = tensorOf(qkv.q)[h], kh = tensorOf(qkv.k)[h], vh = tensorOf(qkv.v)[h];
        at::Tensor outH = out[h];
        for (std::int64_t b = 0; b < blocksPerHead; ++b) {
            const std::int64_t i0 = b * block;
            const std::int64_t rows = std::min(block, n - i0);
            const std::int64_t kEnd = causal ? std::clamp<std::int64_t>(i0 + rows + offset, 0, m) : m;
            at::Tensor rowsView = scratch.narrow(0, 0, rows);
            float* base = rowsView.data_ptr<float>();
            std::uint8_t* rowStatus = status.u8.data() + h * n + i0;
            float* shiftOut = rowShift.f32.data() + h * n + i0;
            float* sumOut = rowSum.f32.data() + h * n + i0;
            if (kEnd > 0) {
                // scores: [rows, kEnd] = Q_block K^T (scaled inside the softmax kernel)
                at::Tensor scores = rowsView.narrow(1, 0, kEnd);
                at::mm_out(scores, qh.narrow(0, i0, rows), kh.narrow(0, 0, kEnd).t());
                // Masking and softmax run on LibTorch's intra-op threads: the SGEMMs already
                // use every core, and between them this is the only work left.
                std::atomic<std::int64_t> emptyInBlock{0};
                at::parallel_for(0, rows, 8, [&](std::int64_t r0, std::int64_t r1) {
                    for (std::int64_t r = r0; r < r1; ++r) {
                        float* row = base + r * m;
                        if (causal)
                            for (std::int64_t j = std::max<std::int64_t>(i0 + r + offset + 1, 0); j < kEnd; ++j)
                                row[j] = kMinusInf;
                        for (std::int64_t j : paddedKeys) {
                            if (j >= kEnd) break;
                            row[j] = kMinusInf;
                        }
                    }
                    emptyInBlock +=
                        softmaxRowsInPlace(base + r0 * m, r1 - r0, kEnd, m, scale, rowStatus + r0, shiftOut + r0, sumOut + r0);
                });
                emptyRows += emptyInBlock.load();
                entries += rows * kEnd;
                flops += 4.0 * static_cast<double>(rows) * kEnd * d;
            } else {
                std::fill(rowStatus, rowStatus + rows, std::uint8_t{1});
                std::fill(shiftOut, shiftOut + rows, kMinusInf);
                std::fill(sumOut, sumOut + rows, 0.0f);
                emptyRows += rows;
            }
            if (padQueries) {
                for (std::int64_t r = 0; r < rows; ++r) {
                    if (!qkv.keyPadding[i0 + r]) continue;
                    if (rowStatus[r] == 1) --emptyRows;
                    rowStatus[r] = 2;
                    shiftOut[r] = kMinusInf;
                    sumOut[r] = 0.0f;
                    std::memset(base + r * m, 0, static_cast<std::size_t>(std::max<std::int64_t>(kEnd, 0)) * sizeof(float));
                }
            }
            at::Tensor outRows = outH.narrow(0, i0, rows);
            if (kEnd > 0)
                at::mm_out(outRows, rowsView.narrow(1, 0, kEnd), vh.narrow(0, 0, kEnd));
            else
                outRows.zero_();
            ctx.checkpoint("attention", h * blocksPerHead + b + 1, heads * blocksPerHead);
        }
    }
    ctx.endStage();

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.stats["row_max"] = std::move(rowShift);
    result.stats["row_sum"] = std::move(rowSum);
    result.emptyRowCount = emptyRows;
    keepRowStatus(std::move(status), result, ctx);

    auto& c = ctx.counters();
    c.flops = flops;
    c.entriesComputed = entries;
    ctx.noteBytes(outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(scratch.numel()) * sizeof(float) +
                  static_cast<std::uint64_t>(heads * n) * 5);
    result.counters = c;
    return result;
}

}  // namespace

namespace variants::full {
std::unique_ptr<Variant> kernel() { return std::make_unique<FullAttention>(); }
}  // namespace variants::full

}  // namespace attnscope::engine
