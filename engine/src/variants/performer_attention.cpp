// `performer`: FAVOR+ (Choromanski et al. 2021, arXiv 2009.14794) with positive orthogonal random
// features, following the reference softmax_kernel (features of x * d^(-1/4), query stabiliser the
// row max, key stabiliser the max over all keys and features of the head).

#include "kernels/blas_gemm.h"
#include "kernels/softmax_kernel.h"
#include "core/to_plain.h"
#include "qkv/seeded_normal.h"
#include "variants/feature_attention.h"

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
at::Tensor orthogonalFeatures(std::int64_t heads, std::int64_t features, std::int64_t d, int scaling, std::uint64_t seed) {
    at::Tensor w = at::empty({heads, features, d}, at::kFloat);
    float* out = w.data_ptr<float>();
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

class PerformerAttention final : public Variant {
public:
    PerformerAttention() {
        m_info.id = "performer";
        m_info.name = "Performer (FAVOR+)";
        m_info.paper = "Choromanski et al. 2021, Rethinking Attention with Performers, arXiv 2009.14794";
        m_info.summary = "Softmax kernel estimated with positive orthogonal random features; O(n m d) time, linear memory.";
        m_info.params = {
            ParamSpec{"nb_features", ParamType::Int, std::int64_t{0}, 0, 16384, {},
                      "Random features m; 0 = floor(d ln d) as the reference."},
            ParamSpec{"kernel", ParamType::Choice, std::string("softmax"), 0, 0, {"softmax", "relu"},
                      "softmax: positive features exp(w.x - |x|^2/2); relu: relu(w.x) + 1e-3 (generalized attention)."},
            ParamSpec{"ortho_scaling", ParamType::Int, std::int64_t{0}, 0, 1, {},
                      "0: rows scaled by Gaussian norms (unbiased); 1: rows scaled by sqrt(d)."},
            ParamSpec{"causal", ParamType::Bool, false, 0, 1, {}, "Prefix sums: key j visible iff j <= i."},
            ParamSpec{"feature_eps", ParamType::Float, 1e-4, 0.0, 1.0, {}, "Added inside the softmax features."},
            ParamSpec{"causal_eps", ParamType::Float, 1e-6, 0.0, 1.0, {}, "Added to the running key sum (causal)."},
        };
    }
    const VariantInfo& info() const override { return m_info; }

    std::uint64_t runBytes(const ProblemShape& s, const ParamValues& params) const override {
        std::int64_t features = paramInt(params, "nb_features");
        if (features == 0) features = std::max<std::int64_t>(1, static_cast<std::int64_t>(s.d * std::log(static_cast<double>(s.d))));
        // phi(Q), phi(K), W, output, den; within the dense limit the error diagnostic's implied
        // and exact matrices
        const auto f = static_cast<std::uint64_t>(features);
        std::uint64_t bytes = static_cast<std::uint64_t>(s.heads) *
                              (static_cast<std::uint64_t>(s.n + s.m) * f * 4 + f * static_cast<std::uint64_t>(s.d) * 4 +
                               static_cast<std::uint64_t>(s.n) * static_cast<std::uint64_t>(s.d * 4 + 4));
        if (s.n <= s.denseLimit && s.m <= s.denseLimit) bytes += static_cast<std::uint64_t>(s.heads * s.n * s.m) * 12;
        return bytes;
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override {
        AttentionResult result = startResult(m_info.id, params, qkv);
        const std::int64_t heads = qkv.heads(), d = qkv.d();
        std::int64_t features = paramInt(params, "nb_features");
        if (features == 0) features = std::max<std::int64_t>(1, static_cast<std::int64_t>(d * std::log(static_cast<double>(d))));
        const bool relu = paramChoice(params, "kernel") == "relu";

        ctx.beginStage("features");
        const at::Tensor w = orthogonalFeatures(heads, features, d, static_cast<int>(paramInt(params, "ortho_scaling")), ctx.seed);
        const double normalizer = std::pow(static_cast<double>(d), -0.25);
        // dash: [H, rows, m] = (x d^(-1/4)) W^T, computed as x (d^(-1/4) W)^T straight into pooled
        // workspaces (at n = 16384, m = 256 each is 128 MiB, and fresh tensors of that size cost
        // more in page faults than the GEMMs themselves), a block of rows at a time, each block
        // turned into features while it is in cache: one pass over the features instead of six.
        const at::Tensor wScaled = (w * normalizer).contiguous();  // [H, m, d]
        const at::Tensor qc = qkv.q.contiguous(), kc = qkv.k.contiguous();
        at::Tensor phiQ = ctx.pool().workspace("performer.phi_q", {heads, qkv.n(), features});
        at::Tensor phiK = ctx.pool().workspace("performer.phi_k", {heads, qkv.m(), features});
        const float ratio = static_cast<float>(1.0 / std::sqrt(static_cast<double>(features)));
        const float eps = static_cast<float>(paramFloat(params, "feature_eps"));
        const double half = 0.5 * normalizer * normalizer;
        std::vector<float> shift(static_cast<std::size_t>(kFeatureBlockRows));
        at::Tensor keyShift = at::zeros({heads}, at::kFloat);  // the key stabiliser: the head's largest projection
        for (std::int64_t h = 0; h < heads; ++h) {
            const float* wp = wScaled.data_ptr<float>() + h * features * d;
            // |x|^2 d^(-1/2) / 2, the diagonal term of the softmax kernel.
            const auto diagonal = [&](const float* x) {
                double sq = 0;
                for (std::int64_t c = 0; c < d; ++c) sq += static_cast<double>(x[c]) * x[c];
                return static_cast<float>(sq * half);
            };
            for (int side = 0; side < 2; ++side) {
                const std::int64_t rows = side == 0 ? qkv.n() : qkv.m();
                const float* xp = (side == 0 ? qc : kc).data_ptr<float>() + h * rows * d;
                float* phi = (side == 0 ? phiQ : phiK).data_ptr<float>() + h * rows * features;
                float headMax = -std::numeric_limits<float>::infinity();
                for (std::int64_t t0 = 0; t0 < rows; t0 += kFeatureBlockRows) {
                    const std::int64_t count = std::min(kFeatureBlockRows, rows - t0);
                    float* block = phi + t0 * features;
                    gemmRowMajor(true, count, features, d, xp + t0 * d, d, wp, d, block, features);
                    if (relu) {
                        for (std::int64_t e = 0; e < count * features; ++e) block[e] = std::max(block[e], 0.0f) + 1e-3f;
                    } else if (side == 0) {
                        // Queries: stabilised by their own row's largest projection.
                        for (std::int64_t t = 0; t < count; ++t)
                            shift[static_cast<std::size_t>(t)] =
                                diagonal(xp + (t0 + t) * d) + maxValue(block + t * features, features);
                        positiveFeaturesInPlace(block, count, features, shift.data(), eps, ratio);
                    } else {
                        headMax = std::max(headMax, maxValue(block, count * features));
                    }
                }
                if (side == 1) keyShift.data_ptr<float>()[h] = relu ? 0.0f : headMax;
                if (relu || side == 0) continue;
                // Keys: stabilised by the head's largest projection, known after all blocks.
                for (std::int64_t t0 = 0; t0 < rows; t0 += kFeatureBlockRows) {
                    const std::int64_t count = std::min(kFeatureBlockRows, rows - t0);
                    for (std::int64_t t = 0; t < count; ++t)
                        shift[static_cast<std::size_t>(t)] = diagonal(xp + (t0 + t) * d) + headMax;
                    positiveFeaturesInPlace(phi + t0 * features, count, features, shift.data(), eps, ratio);
                }
            }
        }
        if (const at::Tensor keep = keyKeepMask(qkv); keep.defined()) phiK.mul_(keep.view({1, qkv.m(), 1}));
        ctx.endStage();

        ctx.beginStage("attention");
        FeatureAttentionSpec spec;
        spec.causal = paramBool(params, "causal");
        // The reference adds eps only in the causal path (to the key cumsum).
        spec.eps = spec.causal ? paramFloat(params, "causal_eps") : 0.0;
        spec.epsMode = FeatureEpsMode::KeyCumsum;
        spec.slot = m_info.id;
        featureAttention(phiQ, phiK, qkv.v, spec, ctx, result);
        ctx.endStage();

        result.diagnostics["projection"] = toPlain(w);
        result.stats["key_shift"] = toPlain(keyShift);
        if (ctx.denseDiagnostics) {
            ctx.beginStage("error");
            // error_l1: [H, n] = sum_j |A_ij - softmax_ij|, the approximation error per query row,
            // from the implied weights A = phiQ phiK^T / den (built only here, within the dense limit)
            const at::Tensor exact = exactSoftmaxWeights(qkv, spec.causal);
            const PlainTensor& denPlain = result.stats.at("den");
            const at::Tensor den = at::from_blob(const_cast<float*>(denPlain.f32.data()), {heads, qkv.n(), 1}, at::kFloat);
            at::Tensor implied = at::bmm(phiQ, phiK.transpose(1, 2));
            if (spec.causal) implied.tril_();
            implied = implied.div_(den.masked_fill(den.le(0), 1.0)).masked_fill_(den.le(0), 0.0);
            const at::Tensor err = (implied - exact).abs_().sum(2);
            result.diagnostics["error_l1"] = toPlain(err);
            result.diagnostics["error_mean"] = toPlain(err.mean(1));
            ctx.endStage();
        }
        result.counters = ctx.counters();
        return result;
    }

private:
    VariantInfo m_info;
};

}  // namespace

std::unique_ptr<Variant> makePerformerAttention() { return std::make_unique<PerformerAttention>(); }

}  // namespace attnscope::engine
