// `entmax`: sparsemax and 1.5-entmax closed forms, alpha = 1 equals `full`, alpha = 2 equals an
// independent sparsemax, bisection agrees with the exact 1.5 algorithm, diagnostics, bad alpha.

#include "sparse_test_support.h"

#include <algorithm>

using namespace sparse_test;

namespace {

ParamValues entmaxParams(std::vector<double> alpha, bool causal = false) { return {{"alpha", alpha}, {"causal", causal}}; }

// d = 1 and q = 1: the scaled scores are exactly the keys.
Qkv3 scoresAre(std::vector<float> z) {
    const auto m = static_cast<std::int64_t>(z.size());
    return {PlainTensor::fromF32({1, 1, 1}, {1.0f}), PlainTensor::fromF32({1, m, 1}, z),
            PlainTensor::fromF32({1, m, 1}, std::vector<float>(z.size(), 1.0f))};
}

std::vector<double> sparsemaxReference(std::vector<double> z) {
    std::vector<double> s = z;
    std::sort(s.rbegin(), s.rend());
    double sum = 0, tau = 0;
    for (std::size_t k = 1; k <= s.size(); ++k) {
        sum += s[k - 1];
        if (1 + k * s[k - 1] > sum) tau = (sum - 1) / k;
    }
    for (auto& v : z) v = std::max(0.0, v - tau);
    return z;
}

}  // namespace

TEST(Entmax, SparsemaxClosedForm) {
    // z = (0.5, 0.2, -1): tau = (0.5 + 0.2 - 1) / 2 = -0.15, p = (0.65, 0.35, 0).
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(scoresAre({0.5f, 0.2f, -1.0f}), "entmax", entmaxParams({2.0})));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    EXPECT_NEAR(res.weightAt(0, 0, 0), 0.65, 1e-6);
    EXPECT_NEAR(res.weightAt(0, 0, 1), 0.35, 1e-6);
    EXPECT_EQ(res.weightAt(0, 0, 2), 0.0f);
    EXPECT_EQ(maskGrid(res, 0), (std::vector<std::string>{"PP."}));
    EXPECT_EQ(res.diagnostics.at("zeros").i64[0], 1);
    EXPECT_FLOAT_EQ(res.diagnostics.at("alpha").f32[0], 2.0f);
}

TEST(Entmax, Entmax15ClosedForm) {
    // z = (1, 0, -3): x = z/2, tau = (1 - sqrt 7)/4, p = ((1 + sqrt 7)/4)^2, ((sqrt 7 - 1)/4)^2, 0.
    auto engine = makeEngine();
    for (double alpha : {1.5, 1.5 + 1e-9}) {  // exact sort-based, then the bisection path
        auto r = runOk(*engine, variantRequest(scoresAre({1.0f, 0.0f, -3.0f}), "entmax", entmaxParams({alpha})));
        ASSERT_TRUE(r);
        const auto& res = r->results[0];
        const double s7 = std::sqrt(7.0);
        EXPECT_NEAR(res.weightAt(0, 0, 0), (1 + s7) * (1 + s7) / 16, 1e-6) << alpha;
        EXPECT_NEAR(res.weightAt(0, 0, 1), (s7 - 1) * (s7 - 1) / 16, 1e-6) << alpha;
        EXPECT_EQ(res.weightAt(0, 0, 2), 0.0f) << alpha;
    }
}

TEST(Entmax, AlphaOneIsSoftmax) {
    auto x = randomQkv(2, 50, 8, 51);
    auto engine = makeEngine();
    for (bool causal : {false, true}) {
        auto e = runOk(*engine, variantRequest(x, "entmax", entmaxParams({1.0}, causal)));
        auto f = runOk(*engine, variantRequest(x, "full", {{"causal", causal}}));
        ASSERT_TRUE(e && f);
        double maxW = 0, maxO = 0;
        for (int h = 0; h < 2; ++h)
            for (std::int64_t i = 0; i < 50; ++i)
                for (std::int64_t j = 0; j < 50; ++j)
                    maxW = std::max(maxW, double(std::abs(e->results[0].weightAt(h, i, j) - f->results[0].weightAt(h, i, j))));
        for (std::int64_t t = 0; t < 2 * 50 * 8; ++t)
            maxO = std::max(maxO, double(std::abs(e->results[0].output[t] - f->results[0].output[t])));
        EXPECT_LT(maxW, 1e-6);
        EXPECT_LT(maxO, 1e-5);
    }
}

TEST(Entmax, AlphaTwoIsSparsemaxPerHeadAndBisectionAgrees) {
    auto x = randomQkv(2, 40, 8, 52);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "entmax", entmaxParams({2.0, 1.5}, true)));
    auto bis = runOk(*engine, variantRequest(x, "entmax", entmaxParams({2.0 - 1e-9, 1.5 + 1e-9}, true)));
    ASSERT_TRUE(r && bis);
    const auto& res = r->results[0];
    const std::int64_t n = 40, d = 8;
    for (std::int64_t i = 0; i < n; ++i) {
        std::vector<double> z;
        for (std::int64_t j = 0; j <= i; ++j) {
            double dot = 0;
            for (std::int64_t c = 0; c < d; ++c) dot += double(x.q.f32[i * d + c]) * x.k.f32[j * d + c];
            z.push_back(dot / std::sqrt(double(d)));
        }
        const auto p = sparsemaxReference(z);
        std::int64_t zeroCount = 0;
        double sum0 = 0, sum1 = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            const double want = j <= i ? p[j] : 0.0;
            EXPECT_NEAR(res.weightAt(0, i, j), want, 1e-6) << i << "," << j;
            if (j <= i && res.weightAt(0, i, j) == 0.0f) ++zeroCount;
            if (j > i) {
                EXPECT_EQ(res.weightAt(1, i, j), 0.0f);
            }
            for (int h = 0; h < 2; ++h) EXPECT_NEAR(bis->results[0].weightAt(h, i, j), res.weightAt(h, i, j), 1e-5);
            sum0 += res.weightAt(0, i, j);
            sum1 += res.weightAt(1, i, j);
        }
        EXPECT_EQ(res.diagnostics.at("zeros").i64[i], zeroCount);
        EXPECT_NEAR(sum0, 1.0, 1e-5);
        EXPECT_NEAR(sum1, 1.0, 1e-5);
    }
    EXPECT_EQ(res.diagnostics.at("alpha").f32, (std::vector<float>{2.0f, 1.5f}));
    // The pattern is the support: weights are the masked softmax's counterpart, non-zero inside.
    for (int h = 0; h < 2; ++h)
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j) EXPECT_EQ(allowed(res, h, i, j), res.weightAt(h, i, j) > 0.0f);
}

TEST(Entmax, BadAlphaIsAOneLineError) {
    auto x = randomQkv(2, 6, 4, 53);
    auto engine = makeEngine();
    EXPECT_NE(errorOf(*engine, variantRequest(x, "entmax", entmaxParams({0.5}))).find("alpha"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "entmax", entmaxParams({4.5}))).find("alpha"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "entmax", entmaxParams({1.5, 1.5, 1.5}))).find("per head"),
              std::string::npos);
}
