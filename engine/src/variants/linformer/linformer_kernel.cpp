// `linformer`: Linformer (Wang et al. 2020, arXiv 2006.04768). Keys and values are projected
// along the sequence to k slots: head = softmax(Q (E K)^T / sqrt(d)) (F V).

#include "core_torch/tensor_views.h"
#include "core_torch/to_plain.h"
#include "qkv/seeded_normal.h"
#include "variants/shared/feature_attention.h"

#include <cmath>

namespace attnscope::engine {
namespace {

constexpr std::uint64_t kProjectionStream = 0x600000000ull;
constexpr std::int64_t kSpectrumLimit = 2048;  // SVD of n x n per head: O(n^3)

// [count, k, n] ~ U(-1/sqrt(k), 1/sqrt(k)) (the reference initialisation), from the seed.
// U(-1/sqrt(k), 1/sqrt(k)) draws [count, k, n], one SeededNormal stream per projection, written
// into recycled storage (a released result's E or F: 16 MiB each at n = 16384, k = 256, which
// page-faulted afresh every call) that becomes the stored diagnostic itself.
PlainTensor uniformProjection(RunContext& ctx, std::int64_t count, std::int64_t k, std::int64_t n, std::uint64_t stream) {
    PlainTensor e;
    e.dtype = DType::F32;
    e.shape = count == 1 ? std::vector<std::int64_t>{k, n} : std::vector<std::int64_t>{count, k, n};
    e.f32 = ctx.pool().take<float>(static_cast<std::size_t>(count * k * n), true);
    e.f32.resize(static_cast<std::size_t>(count * k * n));
    float* p = e.f32.data();
    const double bound = 1.0 / std::sqrt(static_cast<double>(k));
    for (std::int64_t c = 0; c < count; ++c) {
        SeededNormal gen(mixSeed(ctx.seed, stream + static_cast<std::uint64_t>(c)));
        for (std::int64_t i = 0; i < k * n; ++i) p[c * k * n + i] = static_cast<float>((2.0 * gen.uniform() - 1.0) * bound);
    }
    return e;
}

at::Tensor over(PlainTensor& t, std::int64_t count, std::int64_t k, std::int64_t n) {
    return at::from_blob(t.f32.data(), {count, k, n}, at::kFloat);
}

class LinformerAttention final : public Variant {
public:
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
        // E and F, the projected keys and values, pbar [H, n, k], the output and lse; the
        // spectrum's exact matrix (n <= 2048) in double
        std::uint64_t bytes = 2 * count * k * m * 4 + 2 * heads * k * d * 4 + heads * n * (k + d + 1) * 4;
        if (paramBool(params, "spectrum") && n <= 2048 && s.n <= s.denseLimit && s.m <= s.denseLimit)
            bytes += heads * n * m * 12;
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
    // e, f: [P, k, m] with P = heads (sharing none) or 1
    const std::int64_t count = sharing == "none" ? heads : 1;
    const bool sameF = identity || sharing == "kv" || sharing == "layerwise";
    PlainTensor ePlain, fPlain;
    at::Tensor e, f;
    if (identity) {
        e = at::eye(m, at::kFloat).unsqueeze(0).expand({count, m, m}).contiguous();
    } else {
        ePlain = uniformProjection(ctx, count, k, m, kProjectionStream);
        e = over(ePlain, count, k, m);
    }
    if (sameF) {
        f = e;
    } else {
        fPlain = uniformProjection(ctx, count, k, m, kProjectionStream + 0x10000);
        f = over(fPlain, count, k, m);
    }
    // Padded keys do not enter the projected slots.
    at::Tensor eUsed = e, fUsed = f;
    if (std::vector<float> keepValues = keyKeepMask(qkv); !keepValues.empty()) {
        const at::Tensor keep = tensorOver(keepValues, {1, 1, m});
        eUsed = e * keep;
        fUsed = f * keep;
    }
    // kProj, vProj: [H, k, d]
    const at::Tensor kProj = at::matmul(eUsed, tensorOf(qkv.k));
    const at::Tensor vProj = at::matmul(fUsed, tensorOf(qkv.v));
    ctx.endStage();

    ctx.beginStage("attention");
    // pbar: [H, n, k] = softmax(Q kProj^T / sqrt(d)), a distribution over projected slots
    // pbar [H, n, k] is 128 MiB at n = 16384, k = 256: a pooled workspace with the softmax done in
    // place, so steady-state calls touch no fresh memory.
    at::Tensor pbar = workspace(ctx.pool(), "linformer.pbar", {heads, n, k});
    at::bmm_out(pbar, tensorOf(qkv.q), kProj.transpose(1, 2));
    pbar.mul_(1.0 / std::sqrt(static_cast<double>(d)));
    // row_max, row_sum: [H, n], the softmax's shift and sum over the projected slots (the tiles'
    // statistics: pbar = exp(score − row_max) / row_sum)
    const at::Tensor rowMax = at::amax(pbar, {2}, true);
    pbar.sub_(rowMax).exp_();
    const at::Tensor rowSum = pbar.sum(2, true);
    pbar.div_(rowSum);
    auto outBuffer = ctx.pool().resultBuffer("linformer.output", static_cast<std::size_t>(heads * n * d));
    at::Tensor out = tensorOver(*outBuffer, {heads, n, d});
    at::bmm_out(out, pbar, vProj);
    ctx.checkpoint("attention", 1, 1);
    ctx.endStage();

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.stats["row_max"] = toPlain(rowMax.squeeze(2).contiguous());
    result.stats["row_sum"] = toPlain(rowSum.squeeze(2).contiguous());
    result.stats["k_proj"] = toPlain(kProj.contiguous());
    if (identity) {
        result.diagnostics["E"] = toPlain(count == 1 ? e[0] : e);
        result.diagnostics["F"] = result.diagnostics["E"];
    } else {
        result.diagnostics["F"] = sameF ? ePlain : std::move(fPlain);
        result.diagnostics["E"] = std::move(ePlain);
    }
    std::uint64_t bytes = outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(pbar.numel()) * 4;

    // (an n x m diagnostic: built within the request's dense limit only)
    if (paramBool(params, "spectrum") && ctx.denseDiagnostics) {
        if (n <= kSpectrumLimit) {
            ctx.beginStage("spectrum");
            // singular_values: [H, min(n, m)] of the exact softmax matrix; energy = cumsum(s^2) / sum(s^2)
            std::vector<float> exact = exactSoftmaxWeights(qkv, false);
            const at::Tensor sv = at::linalg_svdvals(tensorOver(exact, {qkv.heads(), n, m}).to(at::kDouble));
            const at::Tensor sq = sv.pow(2);
            const at::Tensor energy = sq.cumsum(1).div_(sq.sum(1, true));
            const at::Tensor rank90 = energy.lt(0.9).sum(1).add_(1).clamp_max_(sv.size(1));
            result.diagnostics["singular_values"] = toPlain(sv.to(at::kFloat));
            result.diagnostics["energy"] = toPlain(energy.to(at::kFloat));
            result.diagnostics["rank90"] = toPlain(rank90.to(at::kLong));
            ctx.endStage();
        } else {
            ctx.warn("spectrum skipped: n = " + std::to_string(n) + " exceeds " + std::to_string(kSpectrumLimit) +
                     " tokens (the SVD costs O(n^3) per head)");
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
