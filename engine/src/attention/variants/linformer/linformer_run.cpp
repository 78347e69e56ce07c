// `linformer`: Linformer (Wang et al. 2020, arXiv 2006.04768). Keys and values are projected
// along the sequence to k slots: head = softmax(Q (E K)^T / sqrt(d)) (F V). Head by head on the
// kernels' threads, a block of query rows at a time: nothing of size n x k is held.

#include "base/kernels/parallel_heads.h"
#include "base/runtime/worker_threads.h"
#include "base/kernels/blas_gemm.h"
#include "base/kernels/lapack_svd.h"
#include "base/kernels/softmax_kernel.h"
#include "base/runtime/seeded_normal.h"
#include "attention/variants/shared/feature_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnscope::engine {
namespace {

constexpr std::uint64_t kProjectionStream = 0x600000000ull;
constexpr std::int64_t kSpectrumLimit = 2048;  // SVD of n x n per head: O(n^3)
constexpr std::int64_t kQueryBlockRows = 256;  // query rows whose scores over the k slots are in cache at a time

// U(-1/sqrt(k), 1/sqrt(k)) draws [count, k, n] (the reference initialisation), one SeededNormal
// stream per projection, into recycled storage (a released result's E or F: 16 MiB each at
// n = 16384, k = 256, which page-faulted afresh every call) that becomes the stored diagnostic
// itself. Its storage is taken here; fillUniformProjection draws the values.
PlainTensor uniformProjectionStorage(RunContext& ctx, std::int64_t count, std::int64_t k, std::int64_t n) {
    PlainTensor e;
    e.dtype = DType::F32;
    e.shape = count == 1 ? std::vector<std::int64_t>{k, n} : std::vector<std::int64_t>{count, k, n};
    e.f32 = ctx.pool().take<float>(static_cast<std::size_t>(count * k * n), true);
    e.f32.resize(static_cast<std::size_t>(count * k * n));
    return e;
}

// Projection c of e, from its own stream (independent of the others: E's and F's streams are
// drawn on the kernels' threads at once).
void fillUniformProjection(PlainTensor& e, std::int64_t c, std::uint64_t seed, std::uint64_t stream) {
    const std::int64_t k = e.shape[e.shape.size() - 2], n = e.shape.back();
    float* p = e.f32.data() + c * k * n;
    const double bound = 1.0 / std::sqrt(static_cast<double>(k));
    SeededNormal gen(mixSeed(seed, stream + static_cast<std::uint64_t>(c)));
    for (std::int64_t i = 0; i < k * n; ++i) p[i] = static_cast<float>((2.0 * gen.uniform() - 1.0) * bound);
}

// The identity projection [m, m], or [count, m, m] (k = n: Linformer is then exact attention).
PlainTensor identityProjection(std::int64_t count, std::int64_t m) {
    PlainTensor e = PlainTensor::zeros(DType::F32, count == 1 ? std::vector<std::int64_t>{m, m} : std::vector<std::int64_t>{count, m, m});
    for (std::int64_t c = 0; c < count; ++c)
        for (std::int64_t i = 0; i < m; ++i) e.f32[static_cast<std::size_t>((c * m + i) * m + i)] = 1.0f;
    return e;
}

// A projection [count, k, m] with the columns of padded keys zeroed (they do not enter the slots).
std::vector<float> withoutPaddedKeys(const std::vector<float>& e, std::int64_t rows, std::int64_t m, const std::vector<float>& keep) {
    std::vector<float> out(e);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < m; ++j) out[static_cast<std::size_t>(r * m + j)] *= keep[static_cast<std::size_t>(j)];
    return out;
}

// Per worker: one head's projected values and a block of rows' scores.
struct HeadScratch {
    std::vector<float> vProj, scores;
};

// singular_values [H, min(n, m)] of each head's exact softmax matrix (in double), energy =
// cumsum(s^2) / sum(s^2) and rank90 = the slots holding 90 % of it. False without a LAPACK.
bool addSpectrum(const Qkv& qkv, AttentionResult& result) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), count = std::min(n, m);
    const std::vector<float> exact = exactSoftmaxWeights(qkv, false);
    PlainTensor values = PlainTensor::zeros(DType::F32, {heads, count}), energy = PlainTensor::zeros(DType::F32, {heads, count});
    PlainTensor rank90 = PlainTensor::zeros(DType::I64, {heads});
    std::vector<double> head(static_cast<std::size_t>(n * m));
    for (std::int64_t h = 0; h < heads; ++h) {
        std::copy_n(exact.begin() + h * n * m, n * m, head.begin());
        const std::vector<double> s = singularValues(head.data(), n, m);
        if (static_cast<std::int64_t>(s.size()) != count) return false;
        double total = 0;
        for (double x : s) total += x * x;
        double running = 0;
        std::int64_t below = 0;
        for (std::int64_t i = 0; i < count; ++i) {
            running += s[static_cast<std::size_t>(i)] * s[static_cast<std::size_t>(i)];
            const double share = running / total;
            values.f32[static_cast<std::size_t>(h * count + i)] = static_cast<float>(s[static_cast<std::size_t>(i)]);
            energy.f32[static_cast<std::size_t>(h * count + i)] = static_cast<float>(share);
            below += share < 0.9;
        }
        rank90.i64[static_cast<std::size_t>(h)] = std::min(below + 1, count);
    }
    result.diagnostics["singular_values"] = std::move(values);
    result.diagnostics["energy"] = std::move(energy);
    result.diagnostics["rank90"] = std::move(rank90);
    return true;
}

class LinformerAttention final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // head by head, as it runs them
    bool multipliesWithBlas() const override { return true; }

    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        // k projected keys per query, plus projecting K and V (2 · k · m · d per head, per query 2 · k · m / n)
        const double k = static_cast<double>(std::min(paramInt(params, "k"), s.m));
        return k + 2.0 * k * static_cast<double>(s.m) / static_cast<double>(std::max<std::int64_t>(s.n, 1));
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        const auto k = static_cast<std::uint64_t>(std::min(paramInt(params, "k"), s.m));
        const auto heads = static_cast<std::uint64_t>(s.heads), n = static_cast<std::uint64_t>(s.n),
                   m = static_cast<std::uint64_t>(s.m), d = static_cast<std::uint64_t>(s.d);
        const std::uint64_t count = paramChoice(params, "sharing") == "none" ? heads : 1;
        // E and F (and their copies without padded keys), the projected keys (kept) and values,
        // the output and the row statistics, a block of rows' scores per thread (two counted);
        // the spectrum's exact matrix (n <= 2048) in float and one head in double
        std::uint64_t bytes = 4 * count * k * m * 4 + heads * k * d * 4 + 2 * k * d * 4 + heads * n * (d + 2) * 4 +
                              2 * static_cast<std::uint64_t>(kQueryBlockRows) * k * 4;
        if (paramBool(params, "spectrum") && n <= 2048 && s.n <= s.denseLimit && s.m <= s.denseLimit)
            bytes += heads * n * m * 4 + n * m * 16;
        return bytes;
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
};

AttentionResult LinformerAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    AttentionResult result = startResult(info().id, params, qkv);
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d();
    std::int64_t k = paramInt(params, "k");
    if (k > m) {
        ctx.warn("k = " + std::to_string(k) + " is more than the " + std::to_string(m) + " keys; using k = " + std::to_string(m));
        k = m;
    }
    const std::string& sharing = paramChoice(params, "sharing");
    const bool identity = paramChoice(params, "projection") == "identity";
    if (identity && k != m)
        throw EngineError(ErrorCode::InvalidArgument,
                          "linformer: projection=identity needs k = n (" + std::to_string(m) + "), got k = " + std::to_string(k));

    ctx.beginStage("projection");
    // E, F: [P, k, m] with P = heads (sharing none) or 1
    const std::int64_t count = sharing == "none" ? heads : 1;
    const bool sameF = identity || sharing == "kv" || sharing == "layerwise";
    PlainTensor e = identity ? identityProjection(count, m) : uniformProjectionStorage(ctx, count, k, m);
    PlainTensor f = sameF ? PlainTensor{} : uniformProjectionStorage(ctx, count, k, m);
    if (!identity) {
        const std::int64_t streams = sameF ? count : 2 * count;
        forEachItem(streams, [&](std::int64_t item, int) {
            const bool isF = item >= count;
            fillUniformProjection(isF ? f : e, item % count, ctx.seed, kProjectionStream + (isF ? 0x10000 : 0));
        });
    }
    // Padded keys do not enter the projected slots.
    const std::vector<float> keep = keyKeepMask(qkv);
    const std::vector<float> eMasked = keep.empty() ? std::vector<float>{} : withoutPaddedKeys(e.f32, count * k, m, keep);
    const std::vector<float> fMasked = keep.empty() || sameF ? std::vector<float>{} : withoutPaddedKeys(f.f32, count * k, m, keep);
    const float* eUsed = keep.empty() ? e.f32.data() : eMasked.data();
    const float* fUsed = sameF ? eUsed : keep.empty() ? f.f32.data() : fMasked.data();
    ctx.endStage();

    ctx.beginStage("attention");
    // Per head: kProj = E K and vProj = F V [k, d] (kProj kept: the weights are recomputed from
    // it), then for each block of query rows softmax(Q kProj^T / sqrt(d)) over the k slots and its
    // product with vProj. row_max, row_sum: every weight is exp(score / sqrt(d) − row_max) / row_sum.
    auto outBuffer = ctx.pool().resultBuffer("linformer.output", static_cast<std::size_t>(heads * n * d));
    PlainTensor kProj = ctx.pool().zeros(DType::F32, {heads, k, d});
    PlainTensor rowMax = ctx.pool().zeros(DType::F32, {heads, n}), rowSum = ctx.pool().zeros(DType::F32, {heads, n});
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    std::vector<HeadScratch> scratch(static_cast<std::size_t>(headWorkers(heads)));
    for (auto& s : scratch) {
        s.vProj.resize(static_cast<std::size_t>(k * d));
        s.scores.resize(static_cast<std::size_t>(std::min(kQueryBlockRows, n) * k));
    }
    forEachHead(heads, "attention", ctx, [&](std::int64_t h, int worker) {  // (it scans unscanned values)
        const float *q = qkv.qHead(h), *kh = qkv.kHead(h), *vh = qkv.vHead(h);
        HeadScratch& s = scratch[static_cast<std::size_t>(worker)];
        const std::int64_t c = count == 1 ? 0 : h;
        float* kp = kProj.f32.data() + h * k * d;
        gemmRowMajor(false, k, d, m, eUsed + c * k * m, m, kh, d, kp, d);
        gemmRowMajor(false, k, d, m, fUsed + c * k * m, m, vh, d, s.vProj.data(), d);
        for (std::int64_t i0 = 0; i0 < n; i0 += kQueryBlockRows) {
            const std::int64_t rows = std::min(kQueryBlockRows, n - i0);
            float* scores = s.scores.data();
            gemmRowMajor(true, rows, k, d, q + i0 * d, d, kp, d, scores, k);
            softmaxRowsInPlace(scores, rows, k, k, scale, nullptr, rowMax.f32.data() + h * n + i0, rowSum.f32.data() + h * n + i0);
            gemmRowMajor(false, rows, d, k, scores, k, s.vProj.data(), d, outBuffer->data() + (h * n + i0) * d, d);
        }
    });
    ctx.endStage();

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.stats["row_max"] = std::move(rowMax);
    result.stats["row_sum"] = std::move(rowSum);
    result.stats["k_proj"] = std::move(kProj);
    if (identity) {
        result.diagnostics["F"] = e;
        result.diagnostics["E"] = std::move(e);
    } else {
        result.diagnostics["F"] = sameF ? e : std::move(f);
        result.diagnostics["E"] = std::move(e);
    }
    std::uint64_t scratchBytes = 0;
    for (const auto& s : scratch) scratchBytes += (s.vProj.size() + s.scores.size()) * 4;
    const std::uint64_t bytes = outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(heads * (k * d + 2 * n)) * 4 + scratchBytes;

    // (an n x m diagnostic: built within the request's dense limit only)
    if (paramBool(params, "spectrum") && ctx.denseDiagnostics) {
        if (n > kSpectrumLimit) {
            ctx.warn("spectrum skipped: n = " + std::to_string(n) + " exceeds " + std::to_string(kSpectrumLimit) +
                     " tokens (the SVD costs O(n^3) per head)");
        } else {
            ctx.beginStage("spectrum");
            if (!addSpectrum(qkv, result)) ctx.warn("spectrum skipped: this system's LAPACK (liblapack.so.3) is missing or did not converge");
            ctx.endStage();
        }
    }
    auto& counters = ctx.counters();
    counters.flops = 2.0 * heads * (2.0 * k * m * d + 2.0 * n * k * d);
    counters.entriesComputed = heads * n * k;
    ctx.noteBytes(bytes);
    result.counters = counters;
    return result;
}

}  // namespace

namespace variants::linformer {
std::unique_ptr<Variant> kernel() { return std::make_unique<LinformerAttention>(); }
}  // namespace variants::linformer

}  // namespace attnscope::engine
