// `linear`: prefix-sum and quadratic forms agree; the implied weights reproduce the output.

#include "sparse_test_support.h"

using namespace sparse_test;

namespace {

double phi(double x) { return x > 0 ? x + 1.0 : std::exp(x); }  // elu(x) + 1

// The quadratic (masked) form, written independently: A_ij = phi(q_i).phi(k_j) / (sum_j' ... + eps).
void quadratic(const PlainTensor& q, const PlainTensor& k, const PlainTensor& v, bool causal, double eps, bool kcumsum,
               std::vector<double>& weights, std::vector<double>& output) {
    const auto h = q.shape[0], n = q.shape[1], d = q.shape[2];
    weights.assign(static_cast<std::size_t>(h * n * n), 0.0);
    output.assign(static_cast<std::size_t>(h * n * d), 0.0);
    for (std::int64_t a = 0; a < h; ++a)
        for (std::int64_t i = 0; i < n; ++i) {
            std::vector<double> s(static_cast<std::size_t>(n), 0.0);
            double den = 0, phiSum = 0;
            for (std::int64_t c = 0; c < d; ++c) phiSum += phi(q.f32[(a * n + i) * d + c]);
            for (std::int64_t j = 0; j < n; ++j) {
                if (causal && j > i) continue;
                for (std::int64_t c = 0; c < d; ++c) s[j] += phi(q.f32[(a * n + i) * d + c]) * phi(k.f32[(a * n + j) * d + c]);
                den += s[j];
            }
            den += kcumsum ? eps * phiSum : eps;
            for (std::int64_t j = 0; j < n; ++j) {
                weights[(a * n + i) * n + j] = s[j] / den;
                for (std::int64_t c = 0; c < d; ++c) output[(a * n + i) * d + c] += s[j] / den * v.f32[(a * n + j) * d + c];
            }
        }
}

}  // namespace

TEST(LinearAttention, PrefixSumFormEqualsQuadraticMaskedForm) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 300, 8, 41);  // 300 spans three 128-row chunks
    for (bool causal : {false, true})
        for (const char* mode : {"denominator", "kcumsum"}) {
            const double eps = 1e-3;
            auto r = runOk(*engine, variantRequest(x, "linear", {{"causal", causal}, {"eps", eps}, {"eps_mode", std::string(mode)}}));
            ASSERT_TRUE(r);
            const auto& res = r->results[0];
            std::vector<double> w, o;
            quadratic(x.q, x.k, x.v, causal, eps, std::string(mode) == "kcumsum", w, o);
            double maxW = 0, maxO = 0;
            const std::vector<float> weights = denseWeights(res);
            for (std::size_t i = 0; i < w.size(); ++i) maxW = std::max(maxW, std::abs(w[i] - weights[i]));
            for (std::size_t i = 0; i < o.size(); ++i) maxO = std::max(maxO, std::abs(o[i] - res.output[i]));
            EXPECT_LT(maxW, 1e-6) << causal << mode;
            EXPECT_LT(maxO, 2e-5) << causal << mode;
            if (causal) {
                EXPECT_EQ(res.weightAt(1, 5, 6), 0.0f);
            }
        }
}

TEST(LinearAttention, ImpliedWeightsReproduceOutputAndPaddingRemovesKeys) {
    auto engine = makeEngine();
    const auto x = randomQkv(1, 6, 4, 51);
    auto request = variantRequest(x, "linear", {{"eps", 0.0}});
    request.keyPadding = {0, 0, 1, 0, 0, 0};
    auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    for (int i = 0; i < 6; ++i) {
        if (i == 2) continue;
        double sum = 0;
        for (int j = 0; j < 6; ++j) sum += res.weightAt(0, i, j);
        EXPECT_NEAR(sum, 1.0, 1e-6);  // eps = 0: the implied rows are exactly normalised
        EXPECT_EQ(res.weightAt(0, i, 2), 0.0f);
        for (int c = 0; c < 4; ++c) {
            double expected = 0;
            for (int j = 0; j < 6; ++j) expected += res.weightAt(0, i, j) * x.v.f32[static_cast<std::size_t>(j * 4 + c)];
            EXPECT_NEAR(res.output[static_cast<std::size_t>(i * 4 + c)], expected, 1e-5);
        }
    }
}

// The non-causal output is streamed (phi(Q), phi(K) a block of 512 rows at a
// time, never whole): the same output as the quadratic form, padded keys removed, for both eps
// modes, over three blocks; with every key padded each row is empty (zero output, flagged).
TEST(LinearAttention, StreamedOutputWithoutWeightsEqualsQuadraticForm) {
    auto engine = makeEngine();
    const std::int64_t n = 1100, d = 8;
    auto x = randomQkv(2, n, d, 53);
    std::vector<std::uint8_t> padding(static_cast<std::size_t>(n), 0);
    for (std::int64_t j = 0; j < n; j += 7) padding[static_cast<std::size_t>(j)] = 1;
    for (const char* mode : {"denominator", "kcumsum"}) {
        auto request = variantRequest(x, "linear", {{"eps", 1e-3}, {"eps_mode", std::string(mode)}});
        request.keyPadding = padding;
        auto r = runOk(*engine, request);
        ASSERT_TRUE(r);
        const auto& res = r->results[0];
        // The reference sums over the unpadded keys only (every 37th row checked).
        {
            std::vector<std::int64_t> keys;
            for (std::int64_t j = 0; j < n; ++j)
                if (!padding[static_cast<std::size_t>(j)]) keys.push_back(j);
            const auto m = static_cast<std::int64_t>(keys.size());
            for (std::int64_t a = 0; a < 2; ++a)
                for (std::int64_t i = 0; i < n; i += 37) {
                    double den = 0, phiSum = 0;
                    std::vector<double> num(static_cast<std::size_t>(d), 0.0);
                    for (std::int64_t c = 0; c < d; ++c) phiSum += phi(x.q.f32[static_cast<std::size_t>((a * n + i) * d + c)]);
                    for (std::int64_t jj = 0; jj < m; ++jj) {
                        const std::int64_t j = keys[static_cast<std::size_t>(jj)];
                        double s = 0;
                        for (std::int64_t c = 0; c < d; ++c)
                            s += phi(x.q.f32[static_cast<std::size_t>((a * n + i) * d + c)]) * phi(x.k.f32[static_cast<std::size_t>((a * n + j) * d + c)]);
                        den += s;
                        for (std::int64_t c = 0; c < d; ++c) num[static_cast<std::size_t>(c)] += s * x.v.f32[static_cast<std::size_t>((a * n + j) * d + c)];
                    }
                    den += std::string(mode) == "kcumsum" ? 1e-3 * phiSum : 1e-3;
                    for (std::int64_t c = 0; c < d; ++c)
                        EXPECT_NEAR(res.output[static_cast<std::size_t>((a * n + i) * d + c)], num[static_cast<std::size_t>(c)] / den, 2e-5)
                            << mode << " row " << i;
                }
        }
    }
    auto allPadded = variantRequest(x, "linear", {{"eps", 0.0}});
    allPadded.keyPadding.assign(static_cast<std::size_t>(n), 1);
    auto empty = runOk(*engine, allPadded);
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->results[0].emptyRowCount, 2 * n);
    for (std::size_t e = 0; e < 2 * n * d; e += 97) EXPECT_EQ(empty->results[0].output[e], 0.0f);
}
