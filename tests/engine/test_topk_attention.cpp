// `topk`: the tie rule on a hand-worked row, an independent top-k mask, causal rows with fewer
// than k keys, k = m equals `full`, and k > m.

#include "sparse_test_support.h"

#include <algorithm>

using namespace sparse_test;

namespace {

ParamValues topkParams(std::int64_t k, bool causal, const std::string& ties = "keep") {
    return {{"k", k}, {"causal", causal}, {"ties", ties}};
}

}  // namespace

TEST(TopK, TiesAtTheThresholdAreAllKept) {
    // d = 1 (scale 1), q = 1: the scores are k = (3, 1, 2, 2, 0). With k = 2 the threshold is 2 and
    // both keys scoring 2 are kept (3 keys); ties = index keeps keys 0 and 2 only.
    Qkv3 x{PlainTensor::fromF32({1, 1, 1}, {1.0f}), PlainTensor::fromF32({1, 5, 1}, {3, 1, 2, 2, 0}),
           PlainTensor::fromF32({1, 5, 1}, {1, 2, 3, 4, 5})};
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "topk", topkParams(2, false)));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    EXPECT_EQ(maskGrid(res, 0), (std::vector<std::string>{"K.KK."}));
    const double z = std::exp(3.0) + 2 * std::exp(2.0);
    EXPECT_NEAR(res.weightAt(0, 0, 0), std::exp(3.0) / z, 1e-6);
    EXPECT_NEAR(res.weightAt(0, 0, 2), std::exp(2.0) / z, 1e-6);
    EXPECT_NEAR(res.weightAt(0, 0, 3), std::exp(2.0) / z, 1e-6);
    EXPECT_EQ(res.weightAt(0, 0, 1), 0.0f);
    EXPECT_EQ(res.diagnostics.at("kept").i64[0], 3);
    EXPECT_FLOAT_EQ(res.diagnostics.at("threshold").f32[0], 2.0f);

    auto byIndex = runOk(*engine, variantRequest(x, "topk", topkParams(2, false, "index")));
    ASSERT_TRUE(byIndex);
    EXPECT_EQ(maskGrid(byIndex->results[0], 0), (std::vector<std::string>{"K.K.."}));
    EXPECT_NEAR(byIndex->results[0].weightAt(0, 0, 0), std::exp(3.0) / (std::exp(3.0) + std::exp(2.0)), 1e-6);
}

TEST(TopK, MatchesIndependentTopKMask) {
    auto x = randomQkv(2, 70, 8, 41);  // 70 rows: more than one block of rows only when m is large
    auto engine = makeEngine();
    for (bool causal : {false, true}) {
        const std::int64_t k = 5;
        auto r = runOk(*engine, variantRequest(x, "topk", topkParams(k, causal)));
        ASSERT_TRUE(r);
        const auto& res = r->results[0];
        const std::int64_t n = 70, d = 8;
        // Independent: scores in double, keep s >= k-th largest admissible score.
        const auto mask = [&](int h) {
            std::vector<int> mult(static_cast<std::size_t>(n * n), 0);
            for (std::int64_t i = 0; i < n; ++i) {
                std::vector<double> s;
                for (std::int64_t j = 0; j < n; ++j) {
                    double dot = 0;
                    for (std::int64_t c = 0; c < d; ++c) dot += double(x.q.f32[(h * n + i) * d + c]) * x.k.f32[(h * n + j) * d + c];
                    s.push_back(dot);
                }
                std::vector<double> adm;
                for (std::int64_t j = 0; j < n; ++j)
                    if (!causal || j <= i) adm.push_back(s[j]);
                std::sort(adm.rbegin(), adm.rend());
                const double t = adm.size() > static_cast<std::size_t>(k) ? adm[k - 1] : -INFINITY;
                for (std::int64_t j = 0; j < n; ++j) mult[i * n + j] = (!causal || j <= i) && s[j] >= t;
            }
            return mult;
        };
        for (int h = 0; h < 2; ++h) EXPECT_EQ(multiplicity(res, h), mask(h));
        expectMatchesMaskedSoftmax(res, x.q, x.k, x.v, mask);
        if (causal) {  // row i has i + 1 admissible keys: rows 0..3 keep all of them
            for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(res.diagnostics.at("kept").i64[i], i + 1);
        }
    }
}

TEST(TopK, KEqualToMIsFullAttentionAndKAboveMIsAnError) {
    auto x = randomQkv(1, 12, 4, 42);
    auto engine = makeEngine();
    auto top = runOk(*engine, variantRequest(x, "topk", topkParams(12, true)));
    auto full = runOk(*engine, variantRequest(x, "full", {{"causal", true}}));
    ASSERT_TRUE(top && full);
    for (std::int64_t i = 0; i < 12; ++i)
        for (std::int64_t j = 0; j < 12; ++j)
            EXPECT_NEAR(top->results[0].weightAt(0, i, j), full->results[0].weightAt(0, i, j), 1e-6);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "topk", topkParams(13, false))).find("'k'"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "topk", topkParams(0, false))).find("'k'"), std::string::npos);
}
