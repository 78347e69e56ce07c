// `performer`: FAVOR+ (Choromanski et al. 2021, arXiv 2009.14794) with positive orthogonal random
// features, following the reference softmax_kernel (features of x * d^(-1/4), query stabiliser the
// row max, key stabiliser the max over all keys and features of the head).

#include "base/runtime/worker_threads.h"
#include "base/kernels/blas_gemm.h"
#include "base/kernels/softmax_kernel.h"
#include "base/runtime/seeded_normal.h"
#include "attention/variants/shared/feature_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attnscope::engine {
namespace {

constexpr std::uint64_t kProjectionStream = 0x500000000ull;
constexpr std::int64_t kFeatureBlockRows = 128;  // rows projected and turned into features at a time

// W: [m, d] per head. Rows come in blocks of d orthonormal rows (Gram-Schmidt of Gaussian rows in
// double, the same law as the reference's QR), each row scaled by the norm of an independent
// Gaussian d-vector (ortho_scaling 0) or by sqrt(d) (ortho_scaling 1).
std::vector<float> orthogonalFeatures(std::int64_t heads, std::int64_t features, std::int64_t d, int scaling, std::uint64_t seed) {
    std::vector<float> w(static_cast<std::size_t>(heads * features * d));
    float* out = w.data();
    for (std::int64_t h = 0; h < heads; ++h) {
        SeededNormal gen(mixSeed(seed, kProjectionStream + static_cast<std::uint64_t>(h)));
        std::vector<double> block(static_cast<std::size_t>(d * d));
        for (std::int64_t row = 0; row < features; ++row) {
            const std::int64_t inBlock = row % d;
            if (inBlock == 0) {
                for (auto& x : block) x = gen.normal();
                for (std::int64_t i = 0; i < d; ++i) {
                    double* ri = block.data() + i * d;
                    for (int pass = 0; pass < 2; ++pass)  // twice: re-orthogonalisation keeps it exact in double
                        for (std::int64_t j = 0; j < i; ++j) {
                            const double* rj = block.data() + j * d;
                            double dot = 0;
                            for (std::int64_t c = 0; c < d; ++c) dot += ri[c] * rj[c];
                            for (std::int64_t c = 0; c < d; ++c) ri[c] -= dot * rj[c];
                        }
                    double norm = 0;
                    for (std::int64_t c = 0; c < d; ++c) norm += ri[c] * ri[c];
                    norm = std::sqrt(norm);
                    for (std::int64_t c = 0; c < d; ++c) ri[c] /= norm;
                }
            }
            double multiplier = std::sqrt(static_cast<double>(d));
            if (scaling == 0) {
                double sq = 0;
                for (std::int64_t c = 0; c < d; ++c) {
                    const double g = gen.normal();
                    sq += g * g;
                }
                multiplier = std::sqrt(sq);
            }
            for (std::int64_t c = 0; c < d; ++c)
                out[(h * features + row) * d + c] = static_cast<float>(block[inBlock * d + c] * multiplier);
        }
    }
    return w;
}

// FAVOR+ features of x d^(-1/4) against the rows of W: softmax kernel
// ratio (exp(w.x' - |x'|^2/2 - shift) + eps), the shift being a query row's own largest projection
// and, for keys, the largest projection over all keys and features of the head (found before any
// key feature, or while they are made: FeatureMap::hasHeadKeyShift); relu kernel relu(w.x') + 1e-3.
class PositiveRandomFeatures final : public FeatureMap {
public:
    // w: [heads, features, d]
    PositiveRandomFeatures(const std::vector<float>& w, std::int64_t heads, std::int64_t features, std::int64_t d,
                           double normalizer, bool relu, float eps)
        : m_w(scaled(w, normalizer)), m_features(features), m_d(d), m_relu(relu), m_eps(eps),
          m_ratio(static_cast<float>(1.0 / std::sqrt(static_cast<double>(features)))),
          m_half(0.5 * normalizer * normalizer), m_keyShift(static_cast<std::size_t>(heads), 0.0f) {}

    std::int64_t features() const override { return m_features; }
    const std::vector<float>& keyShift() const { return m_keyShift; }
    float ratio() const { return m_ratio; }  ///< features^(-1/2)
    /// feature_eps as the softmax kernel adds it; 0 for the relu kernel, which adds none.
    float softmaxEps() const { return m_relu ? 0.0f : m_eps; }

    void prepareHead(std::int64_t head, const float* keys, std::int64_t m) override {
        if (m_relu) return;
        std::vector<float> block(static_cast<std::size_t>(kFeatureBlockRows * m_features));
        float headMax = -std::numeric_limits<float>::infinity();
        for (std::int64_t t0 = 0; t0 < m; t0 += kFeatureBlockRows) {
            const std::int64_t count = std::min(kFeatureBlockRows, m - t0);
            project(head, keys + t0 * m_d, count, block.data());
            headMax = std::max(headMax, maxValue(block.data(), count * m_features));
        }
        m_keyShift[static_cast<std::size_t>(head)] = headMax;
    }

    bool hasHeadKeyShift() const override { return !m_relu; }
    float keyFeaturesRunningShift(std::int64_t head, const float* rows, std::int64_t count, float* out,
                                  float& shift) const override {
        for (std::int64_t t0 = 0; t0 < count; t0 += kFeatureBlockRows)
            project(head, rows + t0 * m_d, std::min(kFeatureBlockRows, count - t0), out + t0 * m_features);
        const float previous = shift;
        shift = std::max(shift, maxValue(out, count * m_features));
        float rowShift[kFeatureBlockRows];
        for (std::int64_t t0 = 0; t0 < count; t0 += kFeatureBlockRows) {
            const std::int64_t block = std::min(kFeatureBlockRows, count - t0);
            for (std::int64_t t = 0; t < block; ++t) rowShift[t] = diagonal(rows + (t0 + t) * m_d) + shift;
            positiveFeaturesInPlace(out + t0 * m_features, block, m_features, rowShift, 0.0f, m_ratio);
        }
        return previous == shift ? 1.0f : std::exp(previous - shift);
    }
    float keyFeatureConstant() const override { return m_relu ? 0.0f : m_ratio * m_eps; }
    void setHeadKeyShift(std::int64_t head, float shift) override { m_keyShift[static_cast<std::size_t>(head)] = shift; }

    void queryFeatures(std::int64_t head, const float* rows, std::int64_t count, float* out) const override {
        features(head, rows, count, out, true);
    }
    void keyFeatures(std::int64_t head, const float* rows, std::int64_t count, float* out) const override {
        features(head, rows, count, out, false);
    }

private:
    static std::vector<float> scaled(std::vector<float> w, double normalizer) {
        const auto factor = static_cast<float>(normalizer);  // (in float, as the reference's tensor product)
        for (float& x : w) x *= factor;
        return w;
    }

    void project(std::int64_t head, const float* rows, std::int64_t count, float* out) const {
        gemmRowMajor(true, count, m_features, m_d, rows, m_d, m_w.data() + head * m_features * m_d, m_d, out,
                     m_features);
    }

    // |x|^2 d^(-1/2) / 2, the diagonal term of the softmax kernel.
    float diagonal(const float* x) const {
        double sq = 0;
        for (std::int64_t c = 0; c < m_d; ++c) sq += static_cast<double>(x[c]) * x[c];
        return static_cast<float>(sq * m_half);
    }

    void features(std::int64_t head, const float* rows, std::int64_t count, float* out, bool queries) const {
        float shift[kFeatureBlockRows];
        for (std::int64_t t0 = 0; t0 < count; t0 += kFeatureBlockRows) {
            const std::int64_t block = std::min(kFeatureBlockRows, count - t0);
            float* dash = out + t0 * m_features;
            project(head, rows + t0 * m_d, block, dash);
            if (m_relu) {
                for (std::int64_t e = 0; e < block * m_features; ++e) dash[e] = std::max(dash[e], 0.0f) + 1e-3f;
                continue;
            }
            for (std::int64_t t = 0; t < block; ++t)
                shift[t] = diagonal(rows + (t0 + t) * m_d) +
                           (queries ? maxValue(dash + t * m_features, m_features) : m_keyShift[static_cast<std::size_t>(head)]);
            positiveFeaturesInPlace(dash, block, m_features, shift, m_eps, m_ratio);
        }
    }

    std::vector<float> m_w;  // W d^(-1/4): [H, features, d]
    std::int64_t m_features, m_d;
    bool m_relu;
    float m_eps, m_ratio;
    double m_half;
    std::vector<float> m_keyShift;  // per head; 0 for the relu kernel
};

// [H]: the share of key features φ(k)_r = ratio (exp(w_r·k' − |k'|²/2 − shift) + eps) whose
// exponential term is below eps (the entry is then under 2 ratio eps): where most are, eps
// outweighs what the keys say and every row's weights flatten toward 1/m. Softmax kernel only.
std::vector<float> keyEpsShare(const std::vector<float>& phiK, std::int64_t heads, std::int64_t m, std::int64_t r,
                               float ratio, float eps) {
    std::vector<float> share(static_cast<std::size_t>(heads), 0.0f);
    const float below = 2.0f * ratio * eps;
    for (std::int64_t h = 0; h < heads; ++h) {
        std::int64_t count = 0;
        for (std::int64_t e = 0; e < m * r; ++e) count += phiK[static_cast<std::size_t>(h * m * r + e)] < below;
        share[static_cast<std::size_t>(h)] = m * r > 0 ? static_cast<float>(static_cast<double>(count) / static_cast<double>(m * r)) : 0.0f;
    }
    return share;
}

// [H, n]: sum_j |A_ij − softmax_ij| with A = phi(Q) phi(K)^T / den the implied weights (causal:
// j <= i; a row with den 0 has zero weights), the approximation error of each query row; `phiK`
// receives the key features.
std::vector<float> impliedErrorL1(const Qkv& qkv, FeatureMap& phi, const std::vector<float>& den, bool causal,
                                  std::vector<float>& phiK) {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m(), r = phi.features();
    const std::vector<float> exact = exactSoftmaxWeights(qkv, causal);
    const std::vector<float> phiQ = allFeatures(qkv, phi, false);
    phiK = allFeatures(qkv, phi, true);
    std::vector<float> err(static_cast<std::size_t>(heads * n));
    std::vector<std::vector<float>> implied(static_cast<std::size_t>(kernelThreads()));  // [n, m] per worker
    SingleThreadedBlas singleBlas;  // (one product per head on each worker)
    forEachItem(heads, [&](std::int64_t h, int worker) {
        std::vector<float>& headImplied = implied[static_cast<std::size_t>(worker)];
        headImplied.resize(static_cast<std::size_t>(n * m));
        gemmRowMajor(true, n, m, r, phiQ.data() + h * n * r, r, phiK.data() + h * m * r, r, headImplied.data(), m);
        for (std::int64_t i = 0; i < n; ++i) {
            const float rowDen = den[static_cast<std::size_t>(h * n + i)];
            const float* a = headImplied.data() + i * m;
            const float* e = exact.data() + (h * n + i) * m;
            double sum = 0;
            for (std::int64_t j = 0; j < m; ++j) {
                const float weight = rowDen <= 0 || (causal && j > i) ? 0.0f : a[j] / rowDen;
                sum += std::abs(weight - e[j]);
            }
            err[static_cast<std::size_t>(h * n + i)] = static_cast<float>(sum);
        }
    });
    return err;
}

class PerformerAttention final : public Variant {
public:
    bool checksQkvValues() const override { return true; }  // in featureAttention, head by head
    bool multipliesWithBlas() const override { return true; }
    double scoredKeysPerQuery(const ProblemShape& s, const ParamValues& params) const override {
        std::int64_t features = paramInt(params, "nb_features");
        if (features == 0) features = std::max<std::int64_t>(1, static_cast<std::int64_t>(s.d * std::log(static_cast<double>(s.d))));
        return 2.0 * static_cast<double>(features);  // the features of q and k, then φ(q) · (φ(K)ᵀ V)
    }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        std::int64_t features = paramInt(params, "nb_features");
        if (features == 0) features = std::max<std::int64_t>(1, static_cast<std::int64_t>(s.d * std::log(static_cast<double>(s.d))));
        // W (twice: drawn and scaled), output, den; the features exist a block of rows at a
        // time in each thread's scratch; within the dense limit the error diagnostic's phi(Q),
        // phi(K), implied and exact matrices
        const auto f = static_cast<std::uint64_t>(features), heads = static_cast<std::uint64_t>(s.heads);
        std::uint64_t bytes = heads * (2 * f * static_cast<std::uint64_t>(s.d) * 4 +
                                       static_cast<std::uint64_t>(s.n) * static_cast<std::uint64_t>(s.d * 4 + 4));
        if (s.n <= s.denseLimit && s.m <= s.denseLimit)
            bytes += heads * (static_cast<std::uint64_t>(s.n + s.m) * f * 4 + static_cast<std::uint64_t>(s.n * s.m) * 12);
        return bytes;
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        AttentionResult result = startResult(info().id, params, qkv);
        const std::int64_t heads = qkv.heads(), d = qkv.d();
        std::int64_t features = paramInt(params, "nb_features");
        if (features == 0) features = std::max<std::int64_t>(1, static_cast<std::int64_t>(d * std::log(static_cast<double>(d))));
        result.params["nb_features"] = features;  // the value used (0 = automatic), so the file says it
        const bool relu = paramChoice(params, "kernel") == "relu";

        ctx.beginStage("features");
        std::vector<float> w = orthogonalFeatures(heads, features, d, static_cast<int>(paramInt(params, "ortho_scaling")), ctx.seed);
        PositiveRandomFeatures phi(w, heads, features, d, std::pow(static_cast<double>(d), -0.25), relu,
                                   static_cast<float>(paramFloat(params, "feature_eps")));
        ctx.endStage();

        ctx.beginStage("attention");
        FeatureAttentionSpec spec;
        spec.causal = paramBool(params, "causal");
        // The reference adds eps only in the causal path (to the key cumsum).
        spec.eps = spec.causal ? paramFloat(params, "causal_eps") : 0.0;
        spec.epsMode = FeatureEpsMode::KeyCumsum;
        spec.slot = info().id;
        featureAttention(qkv, phi, spec, ctx, result);
        ctx.endStage();

        result.diagnostics["projection"] = PlainTensor::fromF32({heads, features, d}, std::move(w));
        result.stats["key_shift"] = PlainTensor::fromF32({heads}, phi.keyShift());
        if (ctx.denseDiagnostics) {
            ctx.beginStage("error");
            // error_l1: [H, n] = sum_j |A_ij - softmax_ij|, the approximation error per query row,
            // from the implied weights A = phiQ phiK^T / den (built only here, within the dense limit)
            std::vector<float> phiK;
            const std::vector<float> err = impliedErrorL1(qkv, phi, result.stats.at("den").f32, spec.causal, phiK);
            result.diagnostics["key_eps_share"] =
                PlainTensor::fromF32({heads}, keyEpsShare(phiK, heads, qkv.m(), features, phi.ratio(), phi.softmaxEps()));
            std::vector<float> mean(static_cast<std::size_t>(heads));
            for (std::int64_t h = 0; h < heads; ++h) {
                double sum = 0;
                for (std::int64_t i = 0; i < qkv.n(); ++i) sum += err[static_cast<std::size_t>(h * qkv.n() + i)];
                mean[static_cast<std::size_t>(h)] = static_cast<float>(sum / static_cast<double>(qkv.n()));
            }
            result.diagnostics["error_l1"] = PlainTensor::fromF32({heads, qkv.n()}, err);
            result.diagnostics["error_mean"] = PlainTensor::fromF32({heads}, std::move(mean));
            ctx.endStage();
        }
        result.counters = ctx.counters();
        return result;
    }
};

}  // namespace

namespace variants::performer {
std::unique_ptr<Variant> kernel() { return std::make_unique<PerformerAttention>(); }
}  // namespace variants::performer

}  // namespace attnscope::engine
