#include "variants/feature_attention.h"

#include <cmath>
#include <limits>

namespace attnscope::engine {
namespace {

constexpr std::int64_t kChunk = 128;

// den: [H, rows] from phiQ [H, rows, r] and the key sums z [H, r].
at::Tensor denominators(const at::Tensor& phiQ, const at::Tensor& z, const FeatureAttentionSpec& spec) {
    at::Tensor den = at::bmm(phiQ, z.unsqueeze(2)).squeeze(2);
    if (spec.eps != 0.0) {
        if (spec.epsMode == FeatureEpsMode::Denominator) den.add_(spec.eps);
        else den.add_(phiQ.sum(2), spec.eps);
    }
    return den;
}

}  // namespace

at::Tensor keyKeepMask(const Qkv& qkv) {
    if (qkv.keyPadding.empty()) return {};
    at::Tensor keep = at::empty({qkv.m()}, at::kFloat);
    float* keepData = keep.data_ptr<float>();
    for (std::int64_t j = 0; j < qkv.m(); ++j) keepData[j] = qkv.keyPadding[j] ? 0.0f : 1.0f;
    return keep;
}

at::Tensor exactSoftmaxWeights(const Qkv& qkv, bool causal) {
    at::Tensor scores = at::bmm(qkv.q, qkv.k.transpose(1, 2)).mul_(1.0 / std::sqrt(static_cast<double>(qkv.d())));
    if (causal) {
        at::Tensor future = at::ones({qkv.n(), qkv.m()}, at::kBool).triu_(1 + qkv.m() - qkv.n());
        scores.masked_fill_(future, -std::numeric_limits<float>::infinity());
    }
    return at::softmax(scores, 2);
}

void featureAttention(const at::Tensor& phiQ, const at::Tensor& phiK, const at::Tensor& v,
                      const FeatureAttentionSpec& spec, RunContext& ctx, AttentionResult& result) {
    const std::int64_t heads = phiQ.size(0), n = phiQ.size(1), r = phiQ.size(2), m = phiK.size(1), d = v.size(2);
    if (spec.causal && m != n)
        throw EngineError(ErrorCode::InvalidArgument, result.variantId + ": causal mode needs as many keys as queries");

    auto outBuffer = ctx.pool().resultBuffer(spec.slot + ".output", static_cast<std::size_t>(heads * n * d));
    at::Tensor out = tensorOver(*outBuffer, {heads, n, d});
    at::Tensor den = at::empty({heads, n}, at::kFloat);
    double flops = 0;

    if (!spec.causal) {
        // S = phiK^T v: [H, r, d]; z = sum_j phiK_j: [H, r]
        const at::Tensor context = at::bmm(phiK.transpose(1, 2), v);
        const at::Tensor z = phiK.sum(1);
        at::bmm_out(out, phiQ, context);
        den.copy_(denominators(phiQ, z, spec));
        flops = 2.0 * heads * (m * r * d + n * r * d + n * r);
        ctx.checkpoint("attention", 1, 1);
    } else {
        // Chunked prefix sums: inside a chunk the lower-triangular block is explicit, earlier
        // chunks enter through the running state S and z (the RNN form of the paper).
        at::Tensor state = at::zeros({heads, r, d}, at::kFloat);
        at::Tensor z = at::zeros({heads, r}, at::kFloat);
        const std::int64_t chunks = (n + kChunk - 1) / kChunk;
        for (std::int64_t c = 0; c < chunks; ++c) {
            const std::int64_t i0 = c * kChunk, len = std::min(kChunk, n - i0);
            const at::Tensor qc = phiQ.narrow(1, i0, len), kc = phiK.narrow(1, i0, len), vc = v.narrow(1, i0, len);
            const at::Tensor local = at::bmm(qc, kc.transpose(1, 2)).tril_();  // [H, len, len]
            at::Tensor outc = out.narrow(1, i0, len);
            at::bmm_out(outc, qc, state);
            outc.add_(at::bmm(local, vc));
            at::Tensor denc = at::bmm(qc, z.unsqueeze(2)).squeeze(2).add_(local.sum(2));
            if (spec.eps != 0.0) {
                // KeyCumsum adds eps to every element of the running key sum, so it scales with
                // sum(phi(q)); Denominator adds it once.
                if (spec.epsMode == FeatureEpsMode::Denominator) denc.add_(spec.eps);
                else denc.add_(qc.sum(2), spec.eps);
            }
            den.narrow(1, i0, len).copy_(denc);
            state.baddbmm_(kc.transpose(1, 2), vc);
            z.add_(kc.sum(1));
            flops += 2.0 * heads * (len * r * d * 2 + len * len * (r + d) + len * r);
            ctx.checkpoint("attention", c + 1, chunks);
        }
    }

    // A row whose denominator is 0 (every admissible key has zero features, e.g. all padded)
    // has no admissible key: zero weights and output, reported (never NaN).
    at::Tensor emptyRow = den.le(0);
    const std::int64_t emptyCount = emptyRow.sum().item<std::int64_t>();
    at::Tensor safeDen = den.masked_fill(emptyRow, 1.0);
    out.div_(safeDen.unsqueeze(2));
    if (emptyCount > 0) {
        out.masked_fill_(emptyRow.unsqueeze(2), 0.0);
        PlainTensor status = PlainTensor::zeros(DType::U8, {heads, n});
        const bool* flags = emptyRow.contiguous().data_ptr<bool>();
        for (std::int64_t i = 0; i < heads * n; ++i) status.u8[i] = flags[i] ? 1 : 0;
        result.rowStatus = std::move(status);
        result.emptyRowCount = emptyCount;
    }

    result.pattern.rows = n;
    result.pattern.cols = m;
    result.pattern.implicitDense = true;
    result.pattern.causal = spec.causal;
    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    std::uint64_t bytes = outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(heads) * r * (d + 1) * 4;

    if (ctx.keepWeights) {
        auto weightBuffer = ctx.pool().resultBuffer(spec.slot + ".weights", static_cast<std::size_t>(heads * n * m));
        at::Tensor weights = tensorOver(*weightBuffer, {heads, n, m});
        at::bmm_out(weights, phiQ, phiK.transpose(1, 2));
        if (spec.causal) weights.tril_();
        weights.div_(safeDen.unsqueeze(2));
        if (emptyCount > 0) weights.masked_fill_(emptyRow.unsqueeze(2), 0.0);
        result.weightsLayout = WeightsLayout::Dense;
        result.weights = SharedTensorF32{{heads, n, m}, weightBuffer};
        bytes += weightBuffer->size() * sizeof(float);
    }
    auto& counters = ctx.counters();
    counters.flops = flops;
    counters.entriesComputed = heads * (n + m) * r;
    ctx.noteBytes(bytes);
}

}  // namespace attnscope::engine
