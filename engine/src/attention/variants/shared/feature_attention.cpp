#include "attention/variants/shared/feature_attention.h"

#include "base/kernels/parallel_heads.h"
#include "base/runtime/worker_threads.h"
#include "base/kernels/blas_gemm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attnscope::engine {
namespace {

constexpr std::int64_t kChunk = 128;       // causal: rows of one explicit lower-triangular block
constexpr std::int64_t kStreamRows = 512;  // non-causal: rows of phi(K) / phi(Q) in cache at a time

struct HeadScratch {
    std::vector<float> phiQ, phiK, local, state, z, valueSum;
};

struct HeadArrays {
    const float *q, *k, *v;
    float *out, *den;
};

class FeatureHeads {
public:
    FeatureHeads(const Qkv& qkv, FeatureMap& map, const FeatureAttentionSpec& spec)
        : m_map(map), m_spec(spec), m_n(qkv.n()), m_m(qkv.m()), m_d(qkv.d()), m_r(map.features()),
          m_pad(qkv.keyPadding) {}

    void prepare(HeadScratch& s) const {
        const std::int64_t rows = m_spec.causal ? kChunk : kStreamRows;
        s.phiQ.resize(static_cast<std::size_t>(rows * m_r));
        s.phiK.resize(static_cast<std::size_t>(rows * m_r));
        if (m_spec.causal) s.local.resize(static_cast<std::size_t>(kChunk * kChunk));
        s.state.resize(static_cast<std::size_t>(m_r * m_d));
        s.z.resize(static_cast<std::size_t>(m_r));
        s.valueSum.resize(static_cast<std::size_t>(m_d));
    }

    void run(std::int64_t h, const HeadArrays& a, HeadScratch& s) const {
        const bool runningShift = !m_spec.causal && m_map.hasHeadKeyShift();
        if (!runningShift) m_map.prepareHead(h, a.k, m_m);
        std::fill(s.state.begin(), s.state.end(), 0.0f);
        std::fill(s.z.begin(), s.z.end(), 0.0f);
        if (m_spec.causal) runCausal(h, a, s);
        else if (runningShift) runGlobalRunningShift(h, a, s);
        else runGlobal(h, a, s);
    }

private:
    // phi(K) rows [t0, t0 + rows): features of padded keys are zero; z += their column sums.
    void keyBlock(std::int64_t h, const float* k, std::int64_t t0, std::int64_t rows, HeadScratch& s) const {
        m_map.keyFeatures(h, k + t0 * m_d, rows, s.phiK.data());
        for (std::int64_t t = 0; t < rows; ++t) {
            float* f = s.phiK.data() + t * m_r;
            if (!m_pad.empty() && m_pad[static_cast<std::size_t>(t0 + t)]) std::fill(f, f + m_r, 0.0f);
            for (std::int64_t c = 0; c < m_r; ++c) s.z[static_cast<std::size_t>(c)] += f[c];
        }
    }

    // den_i = phi(q_i).z (+ the eps term), before any key of the query's own chunk.
    float denominator(const float* f, const std::vector<float>& z) const {
        float dot = 0, sum = 0;
        for (std::int64_t c = 0; c < m_r; ++c) {
            dot += f[c] * z[static_cast<std::size_t>(c)];
            sum += f[c];
        }
        if (m_spec.eps != 0.0)
            dot += static_cast<float>(m_spec.eps) * (m_spec.epsMode == FeatureEpsMode::Denominator ? 1.0f : sum);
        return dot;
    }

    // S = sum_j phi(k_j) v_j^T [r, d] and z over all keys first, then out = phi(Q) S / den a block
    // of queries at a time.
    void runGlobal(std::int64_t h, const HeadArrays& a, HeadScratch& s) const {
        for (std::int64_t t0 = 0; t0 < m_m; t0 += kStreamRows) {
            const std::int64_t rows = std::min(kStreamRows, m_m - t0);
            keyBlock(h, a.k, t0, rows, s);
            gemmRowMajor(true, false, m_r, m_d, rows, s.phiK.data(), m_r, a.v + t0 * m_d, m_d, 1.0f, s.state.data(), m_d);
        }
        queryPass(h, a, s);
    }

    // runGlobal for a map with a head-wide key shift (FeatureMap::hasHeadKeyShift), the keys
    // projected once: S and z are summed against the largest projection so far and scaled when it
    // grows; the eps term, the same for every key, is added at the end as ratio·eps·(Σ v_j) to
    // every row of S and ratio·eps·(number of keys) to z (padded keys have no features at all).
    void runGlobalRunningShift(std::int64_t h, const HeadArrays& a, HeadScratch& s) const {
        float shift = -std::numeric_limits<float>::infinity();
        std::fill(s.valueSum.begin(), s.valueSum.end(), 0.0f);
        std::int64_t counted = 0;
        for (std::int64_t t0 = 0; t0 < m_m; t0 += kStreamRows) {
            const std::int64_t rows = std::min(kStreamRows, m_m - t0);
            const float factor = m_map.keyFeaturesRunningShift(h, a.k + t0 * m_d, rows, s.phiK.data(), shift);
            if (factor != 1.0f) {
                for (float& x : s.state) x *= factor;
                for (float& x : s.z) x *= factor;
            }
            for (std::int64_t t = 0; t < rows; ++t) {
                float* f = s.phiK.data() + t * m_r;
                if (!m_pad.empty() && m_pad[static_cast<std::size_t>(t0 + t)]) {
                    std::fill(f, f + m_r, 0.0f);
                    continue;
                }
                ++counted;
                const float* v = a.v + (t0 + t) * m_d;
                for (std::int64_t c = 0; c < m_d; ++c) s.valueSum[static_cast<std::size_t>(c)] += v[c];
                for (std::int64_t c = 0; c < m_r; ++c) s.z[static_cast<std::size_t>(c)] += f[c];
            }
            gemmRowMajor(true, false, m_r, m_d, rows, s.phiK.data(), m_r, a.v + t0 * m_d, m_d, 1.0f, s.state.data(), m_d);
        }
        m_map.setHeadKeyShift(h, shift);
        if (const float constant = m_map.keyFeatureConstant(); constant != 0.0f) {
            for (std::int64_t c = 0; c < m_r; ++c) {
                float* row = s.state.data() + c * m_d;
                for (std::int64_t e = 0; e < m_d; ++e) row[e] += constant * s.valueSum[static_cast<std::size_t>(e)];
                s.z[static_cast<std::size_t>(c)] += constant * static_cast<float>(counted);
            }
        }
        queryPass(h, a, s);
    }

    // out = phi(Q) S and den a block of queries at a time (S and z complete).
    void queryPass(std::int64_t h, const HeadArrays& a, HeadScratch& s) const {
        for (std::int64_t t0 = 0; t0 < m_n; t0 += kStreamRows) {
            const std::int64_t rows = std::min(kStreamRows, m_n - t0);
            m_map.queryFeatures(h, a.q + t0 * m_d, rows, s.phiQ.data());
            gemmRowMajor(false, false, rows, m_d, m_r, s.phiQ.data(), m_r, s.state.data(), m_d, 0.0f, a.out + t0 * m_d, m_d);
            for (std::int64_t t = 0; t < rows; ++t) a.den[t0 + t] = denominator(s.phiQ.data() + t * m_r, s.z);
        }
    }

    // Chunked prefix sums (the RNN form of the paper): inside a chunk the lower-triangular block
    // phi(Q_c) phi(K_c)^T is explicit, earlier chunks enter through the running S and z.
    void runCausal(std::int64_t h, const HeadArrays& a, HeadScratch& s) const {
        for (std::int64_t i0 = 0; i0 < m_n; i0 += kChunk) {
            const std::int64_t len = std::min(kChunk, m_n - i0);
            m_map.queryFeatures(h, a.q + i0 * m_d, len, s.phiQ.data());
            float* out = a.out + i0 * m_d;
            // earlier chunks: out = phi(Q_c) S, den = phi(Q_c).z (+ eps)
            gemmRowMajor(false, false, len, m_d, m_r, s.phiQ.data(), m_r, s.state.data(), m_d, 0.0f, out, m_d);
            for (std::int64_t t = 0; t < len; ++t) a.den[i0 + t] = denominator(s.phiQ.data() + t * m_r, s.z);
            // this chunk: local = tril(phi(Q_c) phi(K_c)^T) [len, len]
            keyBlock(h, a.k, i0, len, s);
            float* local = s.local.data();
            gemmRowMajor(false, true, len, len, m_r, s.phiQ.data(), m_r, s.phiK.data(), m_r, 0.0f, local, len);
            for (std::int64_t i = 0; i < len; ++i) {
                float* row = local + i * len;
                std::fill(row + i + 1, row + len, 0.0f);
                float sum = 0;
                for (std::int64_t j = 0; j <= i; ++j) sum += row[j];
                a.den[i0 + i] += sum;
            }
            gemmRowMajor(false, false, len, m_d, len, local, len, a.v + i0 * m_d, m_d, 1.0f, out, m_d);
            gemmRowMajor(true, false, m_r, m_d, len, s.phiK.data(), m_r, a.v + i0 * m_d, m_d, 1.0f, s.state.data(), m_d);
        }
    }

    FeatureMap& m_map;
    const FeatureAttentionSpec& m_spec;
    std::int64_t m_n, m_m, m_d, m_r;
    const std::vector<std::uint8_t>& m_pad;
};

// A row whose denominator is 0 (every admissible key has zero features, e.g. all padded) has no
// admissible key: zero output (and weights), den 0 and the row flagged in rowStatus (never NaN).
// The other rows are divided by their denominator.
void normaliseRows(float* out, float* den, std::int64_t heads, std::int64_t n, std::int64_t d, AttentionResult& result) {
    std::int64_t empty = 0;
    PlainTensor status;
    for (std::int64_t row = 0; row < heads * n; ++row) {
        float* o = out + row * d;
        if (den[row] > 0) {
            const float inv = 1.0f / den[row];
            for (std::int64_t c = 0; c < d; ++c) o[c] *= inv;
            continue;
        }
        if (empty++ == 0) status = PlainTensor::zeros(DType::U8, {heads, n});
        status.u8[static_cast<std::size_t>(row)] = 1;
        den[row] = 0.0f;
        std::fill(o, o + d, 0.0f);
    }
    if (empty > 0) {
        result.rowStatus = std::move(status);
        result.emptyRowCount = empty;
    }
}

}  // namespace

void featureAttention(const Qkv& qkv, FeatureMap& map, const FeatureAttentionSpec& spec, RunContext& ctx,
                      AttentionResult& result) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d(), r = map.features();
    if (spec.causal && m != n)
        throw EngineError(ErrorCode::InvalidArgument, result.variantId + ": causal mode needs as many keys as queries");
    auto outBuffer = ctx.pool().resultBuffer(spec.slot + ".output", static_cast<std::size_t>(heads * n * d));
    PlainTensor den = PlainTensor::zeros(DType::F32, {heads, n});

    const FeatureHeads work(qkv, map, spec);
    std::vector<HeadScratch> scratch(static_cast<std::size_t>(headWorkers(heads)));
    for (auto& s : scratch) work.prepare(s);
    forEachHead(heads, "attention", ctx, [&](std::int64_t h, int worker) {  // (it scans unscanned values)
        const HeadArrays arrays{qkv.qHead(h), qkv.kHead(h), qkv.vHead(h), outBuffer->data() + h * n * d, den.f32.data() + h * n};
        work.run(h, arrays, scratch[static_cast<std::size_t>(worker)]);
    });
    normaliseRows(outBuffer->data(), den.f32.data(), heads, n, d, result);

    result.output = SharedTensorF32{{heads, n, d}, outBuffer};
    result.stats["den"] = std::move(den);
    auto& counters = ctx.counters();
    const double chunkTerms = spec.causal ? static_cast<double>(n) * kChunk * (r + d) : 0.0;
    counters.flops = 2.0 * heads * (static_cast<double>(m) * r * d + static_cast<double>(n) * r * d + n * r + chunkTerms);
    counters.entriesComputed = heads * (n + m) * r;
    std::uint64_t scratchBytes = 0;
    for (const auto& s : scratch) scratchBytes += (s.phiQ.size() + s.phiK.size() + s.local.size() + s.state.size()) * 4;
    ctx.noteBytes(outBuffer->size() * sizeof(float) + static_cast<std::uint64_t>(heads * n) * 4 + scratchBytes);
}

std::vector<float> allFeatures(const Qkv& qkv, FeatureMap& map, bool keys) {
    const std::int64_t heads = qkv.heads(), rows = keys ? qkv.m() : qkv.n(), d = qkv.d(), r = map.features();
    std::vector<float> phi(static_cast<std::size_t>(heads * rows * r));
    for (std::int64_t h = 0; h < heads; ++h) {
        map.prepareHead(h, qkv.kHead(h), qkv.m());
        const float* in = (keys ? qkv.k : qkv.q).data.get() + h * rows * d;
        float* out = phi.data() + h * rows * r;
        if (keys) map.keyFeatures(h, in, rows, out);
        else map.queryFeatures(h, in, rows, out);
        if (!keys || qkv.keyPadding.empty()) continue;
        for (std::int64_t j = 0; j < rows; ++j)
            if (qkv.keyPadding[static_cast<std::size_t>(j)]) std::fill(out + j * r, out + (j + 1) * r, 0.0f);
    }
    return phi;
}

std::vector<float> keyKeepMask(const Qkv& qkv) {
    std::vector<float> keep;
    if (qkv.keyPadding.empty()) return keep;
    keep.resize(static_cast<std::size_t>(qkv.m()));
    for (std::int64_t j = 0; j < qkv.m(); ++j) keep[static_cast<std::size_t>(j)] = qkv.keyPadding[static_cast<std::size_t>(j)] ? 0.0f : 1.0f;
    return keep;
}

std::vector<float> exactSoftmaxWeights(const Qkv& qkv, bool causal) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), d = qkv.d();
    std::vector<float> weights(static_cast<std::size_t>(heads * n * m));
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    SingleThreadedBlas singleBlas;  // (one product per head on each worker)
    forEachItem(heads, [&](std::int64_t h, int) {
        float* w = weights.data() + h * n * m;
        gemmRowMajor(true, n, m, d, qkv.qHead(h), d, qkv.kHead(h), d, w, m);
        for (std::int64_t i = 0; i < n; ++i) {
            float* row = w + i * m;
            // causal: keys j <= i + (m - n), the last query seeing every key
            const std::int64_t allowed = causal ? std::clamp<std::int64_t>(i + 1 + m - n, 0, m) : m;
            float top = -std::numeric_limits<float>::infinity();
            for (std::int64_t j = 0; j < allowed; ++j) top = std::max(top, row[j] * scale);
            double sum = 0;
            for (std::int64_t j = 0; j < allowed; ++j) sum += (row[j] = std::exp(row[j] * scale - top));
            const float inv = sum > 0 ? static_cast<float>(1.0 / sum) : 0.0f;
            for (std::int64_t j = 0; j < allowed; ++j) row[j] *= inv;
            std::fill(row + allowed, row + m, 0.0f);
        }
    });
    return weights;
}

}  // namespace attnscope::engine
