// `linformer`: identity projections equal `full`; stored E, F reproduce the output; spectrum.

#include "sparse_test_support.h"

using namespace sparse_test;

TEST(LinformerAttention, IdentityProjectionWithKEqualNEqualsFull) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 24, 8, 101);
    auto lin = runOk(*engine, variantRequest(x, "linformer", {{"k", std::int64_t{24}}, {"projection", std::string("identity")}}));
    auto full = runOk(*engine, variantRequest(x, "full", {}));
    ASSERT_TRUE(lin && full);
    for (std::int64_t i = 0; i < 2 * 24 * 8; ++i) EXPECT_NEAR(lin->results[0].output[i], full->results[0].output[i], 1e-5);
    const std::vector<float> lw = denseWeights(lin->results[0]), fw = denseWeights(full->results[0]);
    for (std::int64_t i = 0; i < 2 * 24 * 24; ++i) EXPECT_NEAR(lw[i], fw[i], 1e-6);
}

TEST(LinformerAttention, StoredProjectionsReproduceTheOutput) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 16, 4, 111);
    for (const char* sharing : {"none", "headwise", "kv"}) {
        auto r = runOk(*engine, variantRequest(x, "linformer", {{"k", std::int64_t{5}}, {"sharing", std::string(sharing)}}));
        ASSERT_TRUE(r);
        const auto& res = r->results[0];
        const auto& e = res.diagnostics.at("E");
        const auto& f = res.diagnostics.at("F");
        const bool perHead = std::string(sharing) == "none";
        EXPECT_EQ(e.shape, perHead ? (std::vector<std::int64_t>{2, 5, 16}) : (std::vector<std::int64_t>{5, 16}));
        if (std::string(sharing) == "kv") {
            EXPECT_EQ(e.f32, f.f32);
        }
        for (int h = 0; h < 2; ++h) {
            const std::size_t base = perHead ? static_cast<std::size_t>(h) * 5 * 16 : 0;
            for (float val : e.f32) EXPECT_LE(std::abs(val), 1.0 / std::sqrt(5.0) + 1e-7);
            // Recompute: kp = E k, vp = F v, pbar = softmax(q kp^T / 2), out = pbar vp.
            double kp[5][4] = {}, vp[5][4] = {};
            for (int s = 0; s < 5; ++s)
                for (int j = 0; j < 16; ++j)
                    for (int c = 0; c < 4; ++c) {
                        kp[s][c] += e.f32[base + s * 16 + j] * x.k.f32[static_cast<std::size_t>((h * 16 + j) * 4 + c)];
                        vp[s][c] += f.f32[base + s * 16 + j] * x.v.f32[static_cast<std::size_t>((h * 16 + j) * 4 + c)];
                    }
            for (int i = 0; i < 16; ++i) {
                double sc[5], mx = -1e300, z = 0;
                for (int s = 0; s < 5; ++s) {
                    sc[s] = 0;
                    for (int c = 0; c < 4; ++c) sc[s] += x.q.f32[static_cast<std::size_t>((h * 16 + i) * 4 + c)] * kp[s][c];
                    sc[s] /= 2.0;
                    mx = std::max(mx, sc[s]);
                }
                for (double& s : sc) z += (s = std::exp(s - mx));
                // the implied weights: pbar F, from the kept lse and k_proj
                for (int j = 0; j < 16; ++j) {
                    double w = 0;
                    for (int s = 0; s < 5; ++s) w += sc[s] / z * f.f32[base + s * 16 + j];
                    EXPECT_NEAR(res.weightAt(h, i, j), w, 1e-6);
                }
                for (int c = 0; c < 4; ++c) {
                    double o = 0;
                    for (int s = 0; s < 5; ++s) o += sc[s] / z * vp[s][c];
                    EXPECT_NEAR(res.output[static_cast<std::size_t>((h * 16 + i) * 4 + c)], o, 1e-5);
                }
            }
        }
    }
}

TEST(LinformerAttention, SpectrumOfAUniformMatrixHasRankOne) {
    auto engine = makeEngine();
    // q = 0: every softmax row is uniform, P = (1/n) 1 1^T, singular values (1, 0, ..., 0).
    auto x = randomQkv(1, 10, 4, 121);
    std::fill(x.q.f32.begin(), x.q.f32.end(), 0.0f);
    auto r = runOk(*engine, variantRequest(x, "linformer", {{"k", std::int64_t{4}}}));
    ASSERT_TRUE(r);
    const auto& sv = r->results[0].diagnostics.at("singular_values");
    ASSERT_EQ(sv.shape, (std::vector<std::int64_t>{1, 10}));
    EXPECT_NEAR(sv.f32[0], 1.0, 1e-6);
    for (int i = 1; i < 10; ++i) EXPECT_NEAR(sv.f32[static_cast<std::size_t>(i)], 0.0, 1e-6);
    EXPECT_EQ(r->results[0].diagnostics.at("rank90").i64[0], 1);
    EXPECT_NEAR(r->results[0].diagnostics.at("energy").f32[0], 1.0, 1e-6);
}

TEST(LinformerAttention, KAboveNIsClampedWithANoticeAndCausalIsRefused) {
    auto engine = makeEngine();
    const auto x = randomQkv(1, 6, 4, 131);
    auto r = runOk(*engine, variantRequest(x, "linformer", {{"k", std::int64_t{50}}}));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->results[0].diagnostics.at("E").shape, (std::vector<std::int64_t>{6, 6}));
    ASSERT_FALSE(r->warnings.empty());
    EXPECT_NE(r->warnings[0].find("using k = 6"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "linformer", {{"causal", true}})).find("no parameter 'causal'"),
              std::string::npos);
}
