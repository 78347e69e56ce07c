// `model_softmax`'s run, without LibTorch: per head, blocks of query rows against the keys the
// block sees (every key, the causal prefix, or the window's band), the scores made by the rule
// (attention/weights/softmax_score_rule.h), a row softmax keeping each row's shift and sum, then the
// weighted values. Memory is O(rows · band) scratch per thread besides the output and the row
// statistics, so a windowed layer costs O(n · W) at any length.

#include "attention/variants/model_softmax/model_softmax_rule.h"

#include "base/kernels/parallel_heads.h"
#include "base/kernels/blas_gemm.h"
#include "base/kernels/softmax_kernel.h"
#include "attention/variants/shared/pattern_variant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnscope::engine {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// Rows per block: a block of scores (rows x band floats) stays near 2 MiB, the SGEMMs at their rate.
std::int64_t blockRows(std::int64_t band) {
    return std::clamp<std::int64_t>((2 << 20) / (4 * std::max<std::int64_t>(band, 1)), 32, 256);
}

// The keys a row sees at most (the band of a window, else every key).
std::int64_t keysPerRow(const ParamValues& params, std::int64_t m) {
    const std::int64_t window = paramInt(params, "window");
    if (window <= 0) return m;
    return std::min(m, paramBool(params, "causal") ? window : 2 * window - 1);
}

// The widest band of keys a block of `block` rows scores.
std::int64_t widestBand(const SoftmaxScoreRule& rule, std::int64_t n, std::int64_t block) {
    std::int64_t widest = 0;
    for (std::int64_t i0 = 0; i0 < n; i0 += block)
        widest = std::max(widest, rule.end(std::min(n, i0 + block) - 1) - rule.begin(i0));
    return widest;
}

struct HeadRows {
    const float *q, *k, *v;
    float *out, *rowShift, *rowSum;
    std::uint8_t* status;
    float* sinkShare;  ///< [n] the sink's share of each row (null without sinks)
};

// Folds the head's sink into rows [i0, i0 + rows): their statistics take it in, their weights (in
// `scores`, normalised over the keys) shrink to their share beside it.
void foldSinks(const SoftmaxScoreRule& rule, std::int64_t head, const HeadRows& in, std::int64_t i0, std::int64_t rows,
               float* scores, std::int64_t width) {
    for (std::int64_t a = 0; a < rows; ++a) {
        const std::int64_t i = i0 + a;
        float shift = in.rowShift[i];
        double sum = in.rowSum[i];
        const double keys = rule.foldSink(head, shift, sum);
        for (std::int64_t t = 0; t < width; ++t) scores[a * width + t] = static_cast<float>(scores[a * width + t] * keys);
        in.rowShift[i] = shift;
        in.rowSum[i] = static_cast<float>(sum);
        in.sinkShare[i] = static_cast<float>(1.0 - keys);
    }
}

// What a head's rows scored: the entries a query sees, and of them those whose soft-capped score
// lies within 10 % of the cap (|s| ≥ 0.9 c: the cap has flattened them).
struct HeadCounts {
    std::int64_t entries = 0, saturated = 0, empty = 0;
};

constexpr float kSaturatedShare = 0.9f;

class ModelSoftmaxAttention final : public Variant {
public:
    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        return static_cast<double>(keysPerRow(params, s.m));
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const std::int64_t band = std::min(s.m, keysPerRow(params, s.m) + blockRows(keysPerRow(params, s.m)));
        const auto kept = static_cast<std::uint64_t>(s.heads * s.n) * static_cast<std::uint64_t>(s.d * 4 + 9) +
                          static_cast<std::uint64_t>(s.heads * (s.n + s.m)) * 4;
        return kept + static_cast<std::uint64_t>(headWorkers(s.heads)) * static_cast<std::uint64_t>(blockRows(band) * band) * 4;
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    static void runBlock(const SoftmaxScoreRule& rule, std::int64_t head, const HeadRows& in, std::int64_t d, std::int64_t i0,
                         std::int64_t i1, const std::vector<std::uint8_t>& keyPadding, bool padQueries, std::vector<float>& scores,
                         HeadCounts& counts);
};

// Rows [i0, i1) of one head, counted into `counts`.
void ModelSoftmaxAttention::runBlock(const SoftmaxScoreRule& rule, std::int64_t head, const HeadRows& in, std::int64_t d,
                                     std::int64_t i0, std::int64_t i1, const std::vector<std::uint8_t>& keyPadding, bool padQueries,
                                     std::vector<float>& scores, HeadCounts& counts) {
    const std::int64_t rows = i1 - i0, lo = rule.begin(i0), hi = std::max(rule.end(i1 - 1), lo), width = hi - lo;
    std::int64_t empty = 0;
    if (width > 0) {
        gemmRowMajor(true, rows, width, d, in.q + i0 * d, d, in.k + lo * d, d, scores.data(), width);
        for (std::int64_t a = 0; a < rows; ++a) {
            const std::int64_t i = i0 + a, first = rule.begin(i), last = rule.end(i);
            float* row = scores.data() + a * width;
            rule.scoreRow(head, i, lo, hi, row);
            const float saturated = kSaturatedShare * rule.softcap;
            for (std::int64_t j = lo; j < hi; ++j) {
                if (j < first || j >= last || (!keyPadding.empty() && keyPadding[static_cast<std::size_t>(j)])) row[j - lo] = kMinusInf;
                else if (rule.softcap > 0 && std::abs(row[j - lo]) >= saturated) ++counts.saturated;
            }
            counts.entries += std::max<std::int64_t>(last - first, 0);
        }
        empty = softmaxRowsInPlace(scores.data(), rows, width, width, 1.0f, in.status + i0, in.rowShift + i0, in.rowSum + i0);
    } else {
        std::fill(in.status + i0, in.status + i1, std::uint8_t{1});
        std::fill(in.rowShift + i0, in.rowShift + i1, kMinusInf);
        std::fill(in.rowSum + i0, in.rowSum + i1, 0.0f);
        empty = rows;
    }
    if (rule.hasSinks()) foldSinks(rule, head, in, i0, rows, scores.data(), width);
    if (padQueries)
        for (std::int64_t a = 0; a < rows; ++a) {
            if (!keyPadding[static_cast<std::size_t>(i0 + a)]) continue;
            if (in.status[i0 + a] == 1) --empty;
            in.status[i0 + a] = 2;
            in.rowShift[i0 + a] = kMinusInf;
            in.rowSum[i0 + a] = 0.0f;
            if (in.sinkShare) in.sinkShare[i0 + a] = 0.0f;
            if (width > 0) std::memset(scores.data() + a * width, 0, static_cast<std::size_t>(width) * sizeof(float));
        }
    if (width > 0)
        gemmRowMajor(false, rows, d, width, scores.data(), width, in.v + lo * d, d, in.out + i0 * d, d);
    else
        std::memset(in.out + i0 * d, 0, static_cast<std::size_t>(rows * d) * sizeof(float));
    counts.empty += empty;
}

// Per head, the share of its scored entries the cap saturates (F32 [H]).
PlainTensor saturationShares(const std::vector<HeadCounts>& counts) {
    PlainTensor share = PlainTensor::zeros(DType::F32, {static_cast<std::int64_t>(counts.size())});
    for (std::size_t h = 0; h < counts.size(); ++h)
        share.f32[h] = counts[h].entries > 0 ? static_cast<float>(static_cast<double>(counts[h].saturated) / static_cast<double>(counts[h].entries))
                                             : 0.0f;
    return share;
}

AttentionResult ModelSoftmaxAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d();
    const PlainTensor *bias = nullptr, *sinks = nullptr;
    if (ctx.inputs) {
        if (const auto it = ctx.inputs->find(kRelativeBias); it != ctx.inputs->end()) bias = &it->second;
        if (const auto it = ctx.inputs->find(kSinks); it != ctx.inputs->end()) sinks = &it->second;
    }
    const SoftmaxScoreRule rule = modelSoftmaxRule(params, heads, n, m, d, bias, sinks);
    AttentionResult result = startResult(info().id, params, qkv);

    ctx.beginStage("attention");
    auto outBuffer = ctx.pool().resultBuffer("model_softmax.output", static_cast<std::size_t>(heads * n * d));
    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    PlainTensor rowShift = ctx.pool().zeros(DType::F32, {heads, n}), rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    PlainTensor sinkShare = rule.hasSinks() ? PlainTensor::zeros(DType::F32, {heads, n}) : PlainTensor{};
    const std::int64_t block = blockRows(keysPerRow(params, m)), band = widestBand(rule, n, block);
    std::vector<std::vector<float>> scratch(static_cast<std::size_t>(headWorkers(heads)));
    for (auto& s : scratch) s.resize(static_cast<std::size_t>(block * std::max<std::int64_t>(band, 1)));
    std::vector<HeadCounts> perHead(static_cast<std::size_t>(heads));
    const bool padQueries = !qkv.keyPadding.empty() && n == m;
    forEachHead(heads, "attention", ctx, [&](std::int64_t h, int worker) {
        const HeadRows in{qkv.q.data.get() + h * n * d, qkv.k.data.get() + h * m * d, qkv.v.data.get() + h * m * d,
                          outBuffer->data() + h * n * d, rowShift.f32.data() + h * n, rowSum.f32.data() + h * n,
                          status.u8.data() + h * n, rule.hasSinks() ? sinkShare.f32.data() + h * n : nullptr};
        for (std::int64_t i0 = 0; i0 < n; i0 += block)
            runBlock(rule, h, in, d, i0, std::min(n, i0 + block), qkv.keyPadding, padQueries, scratch[static_cast<std::size_t>(worker)],
                     perHead[static_cast<std::size_t>(h)]);
    });
    ctx.endStage();

    std::int64_t entries = 0, empty = 0;
    for (const HeadCounts& c : perHead) {
        entries += c.entries;
        empty += c.empty;
    }
    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.stats["row_max"] = std::move(rowShift);
    result.stats["row_sum"] = std::move(rowSum);
    result.emptyRowCount = empty;
    keepRowStatus(std::move(status), result, ctx);
    if (bias) result.diagnostics[kRelativeBias] = *bias;
    if (rule.softcap > 0) result.diagnostics[kSoftcapSaturation] = saturationShares(perHead);
    if (sinks) {
        result.diagnostics[kSinks] = *sinks;  // kept with the result: its tiles need them
        result.diagnostics[kSinkShare] = std::move(sinkShare);
    }

    auto& c = ctx.counters();
    c.entriesComputed = entries;
    c.flops = 4.0 * static_cast<double>(entries) * static_cast<double>(d);
    ctx.noteBytes(outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(heads * n) * 9 +
                  scratch.size() * static_cast<std::uint64_t>(block * band) * 4);
    result.counters = c;
    return result;
}

}  // namespace

namespace variants::model_softmax {
std::unique_ptr<Variant> kernel() { return std::make_unique<ModelSoftmaxAttention>(); }
}  // namespace variants::model_softmax

}  // namespace attnscope::engine
