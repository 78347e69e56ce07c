// `topk`: Explicit Sparse Transformer (Zhao et al. 2019): per query, keep the k largest scores
// (after the causal and padding masks) and softmax over them. Score rows are computed in blocks
// of queries; the kept entries are the pattern.

#include "base/kernels/softmax_kernel.h"
#include "attention/variants/shared/dense_rows.h"
#include "attention/variants/shared/pattern_variant.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

// The k-th largest finite value of row[0, m), or −inf when there are at most k: a min-heap of the
// k largest so far, which most values pass with one comparison (nth_element over a 16k-key row
// was most of the run).
float kthLargest(const float* row, std::int64_t m, std::int64_t k, std::vector<float>& heap) {
    heap.clear();
    std::int64_t j = 0;
    for (; j < m && static_cast<std::int64_t>(heap.size()) < k; ++j)
        if (std::isfinite(row[j])) heap.push_back(row[j]);
    std::make_heap(heap.begin(), heap.end(), std::greater<float>());
    bool more = false;
    for (; j < m; ++j) {
        const float x = row[j];
        if (!std::isfinite(x)) continue;
        more = true;
        if (x <= heap.front()) continue;
        std::pop_heap(heap.begin(), heap.end(), std::greater<float>());
        heap.back() = x;
        std::push_heap(heap.begin(), heap.end(), std::greater<float>());
    }
    return more ? heap.front() : -std::numeric_limits<float>::infinity();
}

class TopKAttention final : public Variant {
public:
    bool multipliesWithBlas() const override { return true; }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const double k = static_cast<double>(std::min(paramInt(params, "k"), s.m));
        // output, lse, threshold, kept count and the kept keys (about k per row); a block of scores
        const double rows = static_cast<double>(s.heads * s.n);
        return static_cast<std::uint64_t>(rows * (static_cast<double>(s.d) * 4 + 17 + 4 * k) +
                                          256.0 * static_cast<double>(s.m) * 4);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
};

AttentionResult TopKAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m();
    const std::int64_t k = paramInt(params, "k");
    if (k > m)
        throw EngineError(ErrorCode::InvalidArgument, "topk: parameter 'k' must be in [1, m] = [1, " + std::to_string(m) +
                                                          "] (the number of keys), got " + std::to_string(k));
    const bool byIndex = paramChoice(params, "ties") == "index";
    PlainTensor threshold = ctx.pool().zeros(DType::F32, {heads, n});
    PlainTensor kept = ctx.pool().zeros(DType::I64, {heads, n});
    PlainTensor rowShift = ctx.pool().zeros(DType::F32, {heads, n}), rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    std::fill(rowShift.f32.begin(), rowShift.f32.end(), -std::numeric_limits<float>::infinity());
    // The kept keys of each row, in key order: the selection depends on float ties and rounding
    // of the scores, so it is stored (about k per row) rather than redone from a threshold.
    std::vector<std::vector<std::int32_t>> keptKeys(static_cast<std::size_t>(heads * n));
    std::vector<std::vector<float>> largest(static_cast<std::size_t>(denseRowWorkers(heads)));

    const auto rowFn = [&](int h, std::int64_t i, float* row, float scale, int worker) {
        const float t = kthLargest(row, m, k, largest[static_cast<std::size_t>(worker)]);
        std::int64_t above = 0;
        if (byIndex)
            for (std::int64_t j = 0; j < m; ++j) above += row[j] > t;
        std::int64_t tiesLeft = k - above;
        auto& keys = keptKeys[static_cast<std::size_t>(h * n + i)];
        for (std::int64_t j = 0; j < m; ++j) {
            bool in = std::isfinite(row[j]) && row[j] >= t;
            if (in && byIndex && row[j] == t) in = tiesLeft-- > 0;
            if (in) keys.push_back(static_cast<std::int32_t>(j));
            else row[j] = -std::numeric_limits<float>::infinity();
        }
        const auto at = static_cast<std::size_t>(h * n + i);
        softmaxRowsInPlace(row, 1, m, m, scale, nullptr, &rowShift.f32[at], &rowSum.f32[at]);
        threshold.f32[at] = std::isfinite(t) ? t * scale : t;
        kept.i64[at] = static_cast<std::int64_t>(keys.size());
    };

    AttentionResult result = startResult(info().id, params, qkv);
    DenseRowInput input;
    input.causal = paramBool(params, "causal");
    input.slot = info().id;
    runDenseRows(qkv, input, rowFn, ctx, result);
    std::int64_t width = 0;
    for (const auto& keys : keptKeys) width = std::max(width, static_cast<std::int64_t>(keys.size()));
    PlainTensor keys = PlainTensor::zeros(DType::I32, {heads, n, width});
    std::fill(keys.i32.begin(), keys.i32.end(), -1);
    for (std::size_t row = 0; row < keptKeys.size(); ++row)
        std::copy(keptKeys[row].begin(), keptKeys[row].end(), keys.i32.begin() + static_cast<std::int64_t>(row) * width);
    result.stats["row_max"] = std::move(rowShift);
    result.stats["row_sum"] = std::move(rowSum);
    result.stats["kept_keys"] = std::move(keys);
    result.diagnostics["threshold"] = std::move(threshold);
    result.diagnostics["kept"] = std::move(kept);
    return result;
}

}  // namespace

namespace variants::topk {
std::unique_ptr<Variant> kernel() { return std::make_unique<TopKAttention>(); }
}  // namespace variants::topk

}  // namespace attnscope::engine
