// `entmax`: Adaptively Sparse Transformer (Correia et al. 2019): alpha-entmax instead of softmax,
// with one alpha or one per head. alpha = 1 softmax, 2 sparsemax and 1.5 use exact (sort-based)
// algorithms, other values bisection on the threshold tau. Rows in float64, in blocks of queries.

#include "attention/variants/shared/dense_rows.h"
#include "attention/variants/shared/pattern_variant.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace attnscope::engine {
namespace {

constexpr int kBisectionSteps = 60;  // the tau interval shrinks 2^-60: far below 1e-6

// p = argmax p·z + H_alpha(p) over the simplex, for the admissible scores z (scaled).
// Row statistics of one alpha-entmax row: p_j = max(0, (alpha-1)(z_j - shift) - tau)^(1/(alpha-1))
// / norm (alpha = 1: exp(z_j - shift) / norm), from which every weight is recomputed.
struct EntmaxRowStats {
    double shift = 0, tau = 0, norm = 1;
};

EntmaxRowStats entmaxRow(const std::vector<double>& z, double alpha, std::vector<double>& p) {
    const std::size_t count = z.size();
    p.assign(count, 0.0);
    EntmaxRowStats stats;
    const double zMax = *std::max_element(z.begin(), z.end());
    stats.shift = zMax;
    if (alpha == 1.0) {
        double sum = 0;
        for (std::size_t j = 0; j < count; ++j) sum += p[j] = std::exp(z[j] - zMax);
        for (auto& v : p) v /= sum;
        stats.norm = sum;
        return stats;
    }
    if (alpha == 2.0 || alpha == 1.5) {
        const double f = alpha == 2.0 ? 1.0 : 0.5;
        std::vector<double> x(count);
        for (std::size_t j = 0; j < count; ++j) x[j] = (z[j] - zMax) * f;
        // Only values above −1 can be in the support (the largest is 0 and tau >= −1: the support's
        // terms (x − tau)^(1/(α−1)) sum to one), and the scan below stops at the first value outside
        // it, so sorting those alone gives the same tau (a 16k-key row keeps a few hundred).
        std::vector<double> sorted;
        for (double v : x)
            if (v > -1.0) sorted.push_back(v);
        std::sort(sorted.begin(), sorted.end(), std::greater<double>());
        double sum = 0, sumSq = 0, tau = 0;
        for (std::size_t kk = 1; kk <= sorted.size(); ++kk) {
            const double v = sorted[kk - 1];
            sum += v;
            sumSq += v * v;
            double tauK;
            if (alpha == 2.0) {
                tauK = (sum - 1.0) / static_cast<double>(kk);
            } else {
                const double mean = sum / static_cast<double>(kk);
                const double ss = sumSq - static_cast<double>(kk) * mean * mean;
                tauK = mean - std::sqrt(std::max(0.0, (1.0 - ss) / static_cast<double>(kk)));
            }
            if (tauK >= v) break;  // v is not in the support: tau is the previous one
            tau = tauK;
        }
        for (std::size_t j = 0; j < count; ++j) {
            const double t = std::max(0.0, x[j] - tau);
            p[j] = alpha == 2.0 ? t : t * t;
        }
        stats.tau = tau;
        return stats;
    }
    const double am1 = alpha - 1.0, power = 1.0 / am1;
    std::vector<double> x(count);
    for (std::size_t j = 0; j < count; ++j) x[j] = (z[j] - zMax) * am1;
    double lo = -1.0, hi = -std::pow(1.0 / static_cast<double>(count), am1);
    const auto total = [&](double tau) {
        double s = 0;
        for (double v : x) s += v > tau ? std::pow(v - tau, power) : 0.0;
        return s;
    };
    for (int it = 0; it < kBisectionSteps; ++it) {
        const double mid = 0.5 * (lo + hi);
        (total(mid) >= 1.0 ? lo : hi) = mid;
    }
    double sum = 0;
    for (std::size_t j = 0; j < count; ++j) sum += p[j] = x[j] > lo ? std::pow(x[j] - lo, power) : 0.0;
    for (auto& v : p) v /= sum;  // ensure_sum_one, as the reference
    stats.tau = lo;
    stats.norm = sum;
    return stats;
}

class EntmaxAttention final : public Variant {
public:
    bool multipliesWithBlas() const override { return true; }
    std::uint64_t runBytes(const ProblemShape& s, const ParamValues&) const override {
        // output and three row statistics; a block of scores and one row in double
        return static_cast<std::uint64_t>(s.heads * s.n * (s.d * 4 + 21) + 256 * s.m * 4 + s.m * 24);
    }

    AttentionResult run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const override;
};

AttentionResult EntmaxAttention::run(const Qkv& qkv, const ParamValues& params, RunContext& ctx) const {
    const std::int64_t heads = qkv.heads(), n = qkv.n(), m = qkv.m();
    std::vector<double> alphas = std::get<std::vector<double>>(params.at("alpha"));
    if (alphas.size() != 1 && static_cast<std::int64_t>(alphas.size()) != heads)
        throw EngineError(ErrorCode::InvalidArgument, "entmax: parameter 'alpha' needs 1 value or one per head (" +
                                                          std::to_string(heads) + "), got " + std::to_string(alphas.size()));
    for (double a : alphas)
        if (!(a >= 1.0 && a <= 4.0))
            throw EngineError(ErrorCode::InvalidArgument, "entmax: parameter 'alpha' must be in [1, 4], got " + std::to_string(a));
    PlainTensor alphaOut = ctx.pool().zeros(DType::F32, {heads});
    for (std::int64_t h = 0; h < heads; ++h)
        alphaOut.f32[static_cast<std::size_t>(h)] = static_cast<float>(alphas.size() == 1 ? alphas[0] : alphas[static_cast<std::size_t>(h)]);
    PlainTensor zeros = ctx.pool().zeros(DType::I64, {heads, n});
    PlainTensor shift = ctx.pool().zeros(DType::F32, {heads, n});
    PlainTensor tau = ctx.pool().zeros(DType::F32, {heads, n});
    PlainTensor norm = ctx.pool().zeros(DType::F32, {heads, n});
    struct RowScratch {
        std::vector<double> z, p;
        std::vector<std::int64_t> index;
    };
    std::vector<RowScratch> scratch(static_cast<std::size_t>(denseRowWorkers(heads)));

    const auto rowFn = [&](int h, std::int64_t i, float* row, float scale, int worker) {
        auto& [z, p, index] = scratch[static_cast<std::size_t>(worker)];
        z.clear();
        index.clear();
        float maxScore = -std::numeric_limits<float>::infinity();  // raw: zMax = maxScore·scale exactly in double
        for (std::int64_t j = 0; j < m; ++j)
            if (std::isfinite(row[j])) {
                maxScore = std::max(maxScore, row[j]);
                z.push_back(static_cast<double>(row[j]) * scale);
                index.push_back(j);
            }
        const EntmaxRowStats stats = entmaxRow(z, alphas.size() == 1 ? alphas[0] : alphas[static_cast<std::size_t>(h)], p);
        std::fill(row, row + m, 0.0f);
        std::int64_t zeroCount = 0;
        for (std::size_t t = 0; t < index.size(); ++t) {
            const auto w = static_cast<float>(p[t]);
            row[index[t]] = w;
            zeroCount += w == 0.0f;
        }
        const auto at = static_cast<std::size_t>(h * n + i);
        zeros.i64[at] = zeroCount;
        shift.f32[at] = maxScore;
        tau.f32[at] = static_cast<float>(stats.tau);
        norm.f32[at] = static_cast<float>(stats.norm);
    };

    AttentionResult result = startResult(info().id, params, qkv);
    DenseRowInput input;
    input.causal = paramBool(params, "causal");
    input.slot = info().id;
    runDenseRows(qkv, input, rowFn, ctx, result);
    result.stats["shift"] = std::move(shift);
    result.stats["tau"] = std::move(tau);
    result.stats["norm"] = std::move(norm);
    result.diagnostics["alpha"] = std::move(alphaOut);
    result.diagnostics["zeros"] = std::move(zeros);
    return result;
}

}  // namespace

namespace variants::entmax {
std::unique_ptr<Variant> kernel() { return std::make_unique<EntmaxAttention>(); }
}  // namespace variants::entmax

}  // namespace attnscope::engine
