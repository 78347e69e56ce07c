// `transformer_xl`: one segment of L queries at a time, as the reference evaluates a text: the
// segment's queries against its memory and its own keys (firstKey … segment end). Per segment and
// head two products give the content scores (q + u)·k_j over those keys and the position scores
// (q + v)·r_δ over the distances δ = 0 … keys − 1; a cell takes the position score of its own
// distance i − j (what the reference's _rel_shift does with a reshape, docs/VARIANTS.md). Memory
// is O(L · (M + L)) scratch per thread besides the output, the row statistics and u, v, r.

#include "attention/variants/transformer_xl/transformer_xl_geometry.h"

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

using namespace transformer_xl;

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// Per-thread buffers for one segment.
struct SegmentScratch {
    std::vector<float> qu, qv, scores, byDistance;
    void reserve(std::int64_t rows, std::int64_t keys, std::int64_t d) {
        qu.resize(static_cast<std::size_t>(rows * d));
        qv.resize(static_cast<std::size_t>(rows * d));
        scores.resize(static_cast<std::size_t>(rows * keys));
        byDistance.resize(static_cast<std::size_t>(rows * keys));
    }
};

// What one head's segments need, read-only.
struct HeadInputs {
    const float *q, *k, *v, *u, *r, *pos;
    float* out;
    float *rowShift, *rowSum;
    std::uint8_t* status;
};

class TransformerXlAttention final : public Variant {
public:
    bool multipliesWithBlas() const override { return true; }
    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        const Settings x = settingsOf(params);
        // each query scores its segment's keys and the memory, twice (content and position terms)
        return 2.0 * static_cast<double>(std::min(x.memory + x.segment, s.m));
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const Settings x = settingsOf(params);
        const auto keys = static_cast<std::uint64_t>(std::min(x.memory + x.segment, s.m));
        const auto rows = static_cast<std::uint64_t>(std::min(x.segment, s.n));
        const auto model = static_cast<std::uint64_t>(s.heads * s.d), width = static_cast<std::uint64_t>(encodingWidth(s.heads * s.d));
        const auto distanceRows = static_cast<std::uint64_t>(distances(x));
        const std::uint64_t kept = static_cast<std::uint64_t>(s.heads * s.n) * (s.d * 4 + 9) +
                                   (2 + distanceRows) * model * 4;
        const std::uint64_t draws = (distanceRows * (width + model) + model * width) * 4;
        const std::uint64_t scratch = static_cast<std::uint64_t>(headWorkers(s.heads)) * (2 * rows * s.d + 2 * rows * keys) * 4;
        return kept + std::max(draws, scratch);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;

private:
    static std::int64_t runSegment(const Settings& x, const HeadInputs& in, std::int64_t n, std::int64_t d,
                                   std::int64_t i0, const std::vector<std::uint8_t>& keyPadding, bool padQueries,
                                   SegmentScratch& s);
};

// Rows i0 … i1 − 1 of one head; returns the number of empty rows (every key padded).
std::int64_t TransformerXlAttention::runSegment(const Settings& x, const HeadInputs& in, std::int64_t n, std::int64_t d,
                                                std::int64_t i0, const std::vector<std::uint8_t>& keyPadding,
                                                bool padQueries, SegmentScratch& s) {
    const std::int64_t i1 = std::min(n, i0 + x.segment);
    const std::int64_t rows = i1 - i0, lo = firstKey(x, i0), keys = i1 - lo;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    float* scores = s.scores.data();
    if (x.relative) {
        for (std::int64_t a = 0; a < rows; ++a)
            for (std::int64_t c = 0; c < d; ++c) {
                s.qu[static_cast<std::size_t>(a * d + c)] = in.q[(i0 + a) * d + c] + in.u[c];
                s.qv[static_cast<std::size_t>(a * d + c)] = in.q[(i0 + a) * d + c] + in.r[c];
            }
        gemmRowMajor(true, rows, keys, d, s.qu.data(), d, in.k + lo * d, d, scores, keys);
        gemmRowMajor(true, rows, keys, d, s.qv.data(), d, in.pos, d, s.byDistance.data(), keys);
    } else {
        gemmRowMajor(true, rows, keys, d, in.q + i0 * d, d, in.k + lo * d, d, scores, keys);
    }
    for (std::int64_t a = 0; a < rows; ++a) {
        const std::int64_t i = i0 + a, first = firstKey(x, i);
        float* row = scores + a * keys;
        const float* byDistance = s.byDistance.data() + a * keys;
        for (std::int64_t t = 0; t < keys; ++t) {
            const std::int64_t j = lo + t;
            if (j < first || j > i || (!keyPadding.empty() && keyPadding[static_cast<std::size_t>(j)]))
                row[t] = kMinusInf;
            else if (x.relative)
                row[t] += byDistance[i - j];
        }
    }
    std::int64_t empty =
        softmaxRowsInPlace(scores, rows, keys, keys, scale, in.status + i0, in.rowShift + i0, in.rowSum + i0);
    if (padQueries)
        for (std::int64_t a = 0; a < rows; ++a) {
            if (!keyPadding[static_cast<std::size_t>(i0 + a)]) continue;
            if (in.status[i0 + a] == 1) --empty;
            in.status[i0 + a] = 2;
            in.rowShift[i0 + a] = kMinusInf;
            in.rowSum[i0 + a] = 0.0f;
            std::memset(scores + a * keys, 0, static_cast<std::size_t>(keys) * sizeof(float));
        }
    gemmRowMajor(false, rows, d, keys, scores, keys, in.v + lo * d, d, in.out + i0 * d, d);
    return empty;
}

AttentionResult TransformerXlAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    requireSelfAttention(info().id, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n(), d = qkv.d();
    const Settings x = settingsOf(params);
    AttentionResult result = startResult(info().id, params, qkv);

    ctx.beginStage("positions");
    Parameters p = parametersFor(ctx.inputs, ctx.seed, heads, d, x);
    ctx.endStage();

    ctx.beginStage("attention");
    auto outBuffer = ctx.pool().resultBuffer("transformer_xl.output", static_cast<std::size_t>(heads * n * d));
    PlainTensor status = ctx.pool().zeros(DType::U8, {heads, n});
    PlainTensor rowShift = ctx.pool().zeros(DType::F32, {heads, n}), rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    const std::int64_t rows = std::min(x.segment, n), keys = std::min(distances(x), n);
    std::vector<SegmentScratch> scratch(static_cast<std::size_t>(headWorkers(heads)));
    for (auto& s : scratch) s.reserve(rows, keys, d);
    std::vector<std::int64_t> emptyPerHead(static_cast<std::size_t>(heads), 0), entriesPerHead(static_cast<std::size_t>(heads), 0);
    const bool padQueries = !qkv.keyPadding.empty();
    const float* q = qkv.q.data.get();
    const float* k = qkv.k.data.get();
    const float* v = qkv.v.data.get();
    forEachHead(heads, "attention", ctx, [&](std::int64_t h, int worker) {
        HeadInputs in{q + h * n * d, k + h * n * d, v + h * n * d, p.wBias.f32.data() + h * d, p.rBias.f32.data() + h * d,
                      p.posKeys.f32.data() + h * distances(x) * d, outBuffer->data() + h * n * d,
                      rowShift.f32.data() + h * n, rowSum.f32.data() + h * n, status.u8.data() + h * n};
        for (std::int64_t i0 = 0; i0 < n; i0 += x.segment) {
            emptyPerHead[static_cast<std::size_t>(h)] +=
                runSegment(x, in, n, d, i0, qkv.keyPadding, padQueries, scratch[static_cast<std::size_t>(worker)]);
            for (std::int64_t i = i0; i < std::min(n, i0 + x.segment); ++i)
                entriesPerHead[static_cast<std::size_t>(h)] += i - firstKey(x, i) + 1;
        }
    });
    ctx.endStage();

    std::int64_t entries = 0, empty = 0;
    for (std::int64_t h = 0; h < heads; ++h) {
        entries += entriesPerHead[static_cast<std::size_t>(h)];
        empty += emptyPerHead[static_cast<std::size_t>(h)];
    }
    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.stats["row_max"] = std::move(rowShift);
    result.stats["row_sum"] = std::move(rowSum);
    result.emptyRowCount = empty;
    keepRowStatus(std::move(status), result, ctx);
    result.diagnostics["r_w_bias"] = std::move(p.wBias);
    result.diagnostics["r_r_bias"] = std::move(p.rBias);
    result.diagnostics["pos_keys"] = std::move(p.posKeys);

    auto& c = ctx.counters();
    c.entriesComputed = entries;
    // content and position products over the segment's keys, then the weighted values
    c.flops = static_cast<double>(entries) * d * 2.0 * (x.relative ? 3.0 : 2.0);
    ctx.noteBytes(outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(heads * n) * 9 +
                  scratch.size() * static_cast<std::uint64_t>(2 * rows * d + 2 * rows * keys) * 4);
    result.counters = c;
    return result;
}

}  // namespace

namespace variants::transformer_xl {
std::unique_ptr<Variant> kernel() { return std::make_unique<TransformerXlAttention>(); }
}  // namespace variants::transformer_xl

}  // namespace attnscope::engine
