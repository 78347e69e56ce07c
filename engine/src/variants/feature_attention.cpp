#include "variants/feature_attention.h"

#include "core/to_plain.h"
#include "kernels/blas_gemm.h"

#include <cmath>
#include <limits>
#include <vector>

namespace attnscope::engine {
namespace {

constexpr std::int64_t kChunk = 128;
constexpr std::int64_t kStreamRows = 512;  // rows of phi(K) / phi(Q) in cache at a time

// den: [H, rows] from phiQ [H, rows, r] and the key sums z [H, r].
at::Tensor denominators(const at::Tensor& phiQ, const at::Tensor& z, const FeatureAttentionSpec& spec) {
    at::Tensor den = at::bmm(phiQ, z.unsqueeze(2)).squeeze(2);
    if (spec.eps != 0.0) {
        if (spec.epsMode == FeatureEpsMode::Denominator) den.add_(spec.eps);
        else den.add_(phiQ.sum(2), spec.eps);
    }
    return den;
}


// A row whose denominator is 0 (every admissible key has zero features, e.g. all padded) has no
// admissible key: zero output (and weights), reported in rowStatus (never NaN). divide: also
// divides the other rows by their denominator. Returns the denominators with 1 for empty rows.
at::Tensor zeroEmptyRows(at::Tensor& out, const at::Tensor& den, bool divide, AttentionResult& result) {
    const std::int64_t heads = out.size(0), n = out.size(1);
    const at::Tensor emptyRow = den.le(0);
    const std::int64_t emptyCount = emptyRow.sum().item<std::int64_t>();
    at::Tensor safeDen = den.masked_fill(emptyRow, 1.0);
    if (divide) out.div_(safeDen.unsqueeze(2));
    if (emptyCount > 0) {
        out.masked_fill_(emptyRow.unsqueeze(2), 0.0);
        PlainTensor status = PlainTensor::zeros(DType::U8, {heads, n});
        const bool* flags = emptyRow.contiguous().data_ptr<bool>();
        for (std::int64_t i = 0; i < heads * n; ++i) status.u8[i] = flags[i] ? 1 : 0;
        result.rowStatus = std::move(status);
        result.emptyRowCount = emptyCount;
    }
    return safeDen;
}

// The output and the row statistic the weights are recomputed from: den [H, n] (w_ij =
// phi(q_i)·phi(k_j) / den_i; 0 for an empty row).
void describeOutput(AttentionResult& result, const std::shared_ptr<std::vector<float>>& outBuffer, std::int64_t n,
                    std::int64_t d, const at::Tensor& den) {
    result.output = SharedTensorF32{{static_cast<std::int64_t>(outBuffer->size()) / (n * d), n, d}, outBuffer};
    result.stats["den"] = toPlain(den.masked_fill(den.le(0), 0.0).contiguous());
}

}  // namespace

void streamedFeatureAttention(const Qkv& qkv, void (*phi)(float* values, std::int64_t count),
                              const FeatureAttentionSpec& spec, RunContext& ctx, AttentionResult& result) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d(), r = d;
    auto outBuffer = ctx.pool().resultBuffer(spec.slot + ".output", static_cast<std::size_t>(heads * n * d));
    at::Tensor out = tensorOver(*outBuffer, {heads, n, d});
    at::Tensor den = at::empty({heads, n}, at::kFloat);
    const at::Tensor qc = qkv.q.contiguous(), kc = qkv.k.contiguous(), vc = qkv.v.contiguous();
    float* block = ctx.pool().workspace(spec.slot + ".phi_block", {kStreamRows * r}).data_ptr<float>();
    at::Tensor context = ctx.pool().workspace(spec.slot + ".context", {r, d});  // S = sum_j phi(k_j) v_j^T
    std::vector<float> z(static_cast<std::size_t>(r));                          // sum_j phi(k_j)
    const std::vector<std::uint8_t>& pad = qkv.keyPadding;
    for (std::int64_t h = 0; h < heads; ++h) {
        context.zero_();
        std::fill(z.begin(), z.end(), 0.0f);
        const float* kp = kc.data_ptr<float>() + h * m * d;
        const float* vp = vc.data_ptr<float>() + h * m * d;
        for (std::int64_t t0 = 0; t0 < m; t0 += kStreamRows) {
            const std::int64_t rows = std::min(kStreamRows, m - t0);
            std::copy(kp + t0 * d, kp + (t0 + rows) * d, block);
            phi(block, rows * r);
            for (std::int64_t t = 0; t < rows; ++t) {
                float* f = block + t * r;
                if (!pad.empty() && pad[static_cast<std::size_t>(t0 + t)]) std::fill(f, f + r, 0.0f);
                for (std::int64_t c = 0; c < r; ++c) z[static_cast<std::size_t>(c)] += f[c];
            }
            const at::Tensor features = at::from_blob(block, {rows, r}, at::kFloat);
            const at::Tensor values = at::from_blob(const_cast<float*>(vp + t0 * d), {rows, d}, at::kFloat);
            context.addmm_(features.t(), values);
        }
        const float* qp = qc.data_ptr<float>() + h * n * d;
        float* op = out[h].data_ptr<float>();
        float* dp = den[h].data_ptr<float>();
        for (std::int64_t t0 = 0; t0 < n; t0 += kStreamRows) {
            const std::int64_t rows = std::min(kStreamRows, n - t0);
            std::copy(qp + t0 * d, qp + (t0 + rows) * d, block);
            phi(block, rows * r);
            gemmRowMajor(false, rows, d, r, block, r, context.data_ptr<float>(), d, op + t0 * d, d);
            for (std::int64_t t = 0; t < rows; ++t) {
                const float* f = block + t * r;
                float dot = 0, sum = 0;
                for (std::int64_t c = 0; c < r; ++c) {
                    dot += f[c] * z[static_cast<std::size_t>(c)];
                    sum += f[c];
                }
                if (spec.eps != 0.0) dot += static_cast<float>(spec.eps) * (spec.epsMode == FeatureEpsMode::Denominator ? 1.0f : sum);
                dp[t0 + t] = dot;
                if (dot > 0) {
                    const float inv = 1.0f / dot;
                    for (std::int64_t c = 0; c < d; ++c) op[(t0 + t) * d + c] *= inv;
                }
            }
        }
        ctx.checkpoint("attention", h + 1, heads);
    }
    zeroEmptyRows(out, den, false, result);
    describeOutput(result, outBuffer, n, d, den);
    auto& counters = ctx.counters();
    counters.flops = 2.0 * heads * (m * r * d + n * r * d + n * r);
    counters.entriesComputed = heads * (n + m) * r;
    ctx.noteBytes(outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(kStreamRows * r + r * d) * 4);
}

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

    zeroEmptyRows(out, den, true, result);
    describeOutput(result, outBuffer, n, d, den);
    const std::uint64_t bytes = outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(heads) * r * (d + 1) * 4;
    auto& counters = ctx.counters();
    counters.flops = flops;
    counters.entriesComputed = heads * (n + m) * r;
    ctx.noteBytes(bytes);
}

}  // namespace attnscope::engine
