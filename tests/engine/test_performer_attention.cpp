// `performer`: stored projection, orthogonality, implied weights, error falling with features.

#include "sparse_test_support.h"

using namespace sparse_test;

TEST(PerformerAttention, ProjectionBlocksAreOrthogonalAndStored) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 10, 8, 61);
    auto r = runOk(*engine, variantRequest(x, "performer", {{"nb_features", std::int64_t{20}}, {"ortho_scaling", std::int64_t{1}}}));
    ASSERT_TRUE(r);
    const auto& w = r->results[0].diagnostics.at("projection");
    ASSERT_EQ(w.shape, (std::vector<std::int64_t>{2, 20, 8}));
    // Rows within a block of d = 8 are orthogonal with norm sqrt(d) (ortho_scaling 1).
    for (int h = 0; h < 2; ++h)
        for (int a = 0; a < 20; ++a)
            for (int b = (a / 8) * 8; b < std::min(20, (a / 8) * 8 + 8); ++b) {
                double dot = 0;
                for (int c = 0; c < 8; ++c)
                    dot += double(w.f32[static_cast<std::size_t>((h * 20 + a) * 8 + c)]) * w.f32[static_cast<std::size_t>((h * 20 + b) * 8 + c)];
                EXPECT_NEAR(dot, a == b ? 8.0 : 0.0, 1e-4) << h << " " << a << " " << b;
            }
    // The default is floor(d ln d) = floor(8 ln 8) = 16 features.
    auto d = runOk(*engine, variantRequest(x, "performer", {}));
    EXPECT_EQ(d->results[0].diagnostics.at("projection").shape[1], 16);
}

TEST(PerformerAttention, ImpliedWeightsReproduceOutputBothModes) {
    auto engine = makeEngine();
    const auto x = randomQkv(1, 140, 8, 71);
    for (bool causal : {false, true})
        for (const char* kernel : {"softmax", "relu"}) {
            auto r = runOk(*engine, variantRequest(x, "performer", {{"causal", causal}, {"kernel", std::string(kernel)}}));
            ASSERT_TRUE(r);
            const auto& res = r->results[0];
            for (int i = 0; i < 140; i += 13) {
                double rowSum = 0;
                for (int j = 0; j < 140; ++j) {
                    const float wij = res.weightAt(0, i, j);
                    EXPECT_GE(wij, 0.0f);
                    if (causal && j > i) {
                        EXPECT_EQ(wij, 0.0f);
                    }
                    rowSum += wij;
                }
                // Non-causal rows are normalised exactly. Causally, the reference adds eps to every
                // element of the running key sum, which weighs most on early rows: rows sum below 1.
                if (causal) {
                    EXPECT_LE(rowSum, 1.0 + 1e-6);
                    EXPECT_GT(rowSum, 0.9);
                } else {
                    EXPECT_NEAR(rowSum, 1.0, 1e-5);
                }
                for (int c = 0; c < 8; ++c) {
                    double expected = 0;
                    for (int j = 0; j < 140; ++j) expected += res.weightAt(0, i, j) * x.v.f32[static_cast<std::size_t>(j * 8 + c)];
                    EXPECT_NEAR(res.output[static_cast<std::size_t>(i * 8 + c)], expected, 2e-5);
                }
            }
        }
}

TEST(PerformerAttention, ErrorAgainstSoftmaxFallsAsFeaturesGrow) {
    auto engine = makeEngine();
    // Moderate scores so that the softmax kernel estimate converges visibly.
    Qkv3 x{randomTensor(4, 64, 16, 81, 0.6f), randomTensor(4, 64, 16, 82, 0.6f), randomTensor(4, 64, 16, 83, 0.6f)};
    double previous = 1e9, first = 0;
    for (std::int64_t m : {8, 64, 512, 4096}) {
        auto r = runOk(*engine, variantRequest(x, "performer", {{"nb_features", m}}));
        ASSERT_TRUE(r);
        const auto& err = r->results[0].diagnostics.at("error_mean");
        double mean = 0;
        for (float e : err.f32) mean += e / err.f32.size();
        EXPECT_LT(mean, previous) << "m = " << m;
        if (first == 0) first = mean;
        previous = mean;
    }
    EXPECT_LT(previous, 0.1);
    EXPECT_GT(first / previous, 4.0) << "512x more features should cut the mean L1 error well down";
}

TEST(PerformerAttention, SameSeedSameDrawsOtherSeedOtherDraws) {
    auto engine = makeEngine();
    const auto x = randomQkv(1, 12, 4, 91);
    RunRequest a = variantRequest(x, "performer", {}), b = a, c = a;
    c.projection.seed = 99;
    auto ra = runOk(*engine, a), rb = runOk(*engine, b), rc = runOk(*engine, c);
    EXPECT_EQ(ra->results[0].diagnostics.at("projection").f32, rb->results[0].diagnostics.at("projection").f32);
    EXPECT_NE(ra->results[0].diagnostics.at("projection").f32, rc->results[0].diagnostics.at("projection").f32);
    auto bad = variantRequest(x, "performer", {{"nb_features", std::int64_t{-1}}});
    EXPECT_NE(errorOf(*engine, bad).find("nb_features"), std::string::npos);
}

// The output of head h recomputed in double from the stored projection W alone, by the reference's
// softmax_kernel: x' = x d^(-1/4); phi(x) = (exp(x'W^T - |x'|^2/2 - stabiliser) + eps) / sqrt(m),
// the stabiliser being the row's largest projection for queries and the head's largest for keys;
// out_i = phi(q_i) sum_j phi(k_j) v_j^T / phi(q_i) sum_j phi(k_j). Padded keys are left out of the
// sums, not out of the head's largest projection (the engine's definition: key_shift).
struct ReferenceHead {
    std::vector<double> out;  // [n, d]
    double keyMax = -1e300;
};

ReferenceHead performerReference(const Qkv3& x, const PlainTensor& w, std::int64_t h, const std::vector<std::uint8_t>& padding = {}) {
    const std::int64_t n = x.q.shape[1], d = x.q.shape[2], m = w.shape[1];
    const double scale = std::pow(double(d), -0.25), eps = 1e-4;
    ReferenceHead ref;
    const auto features = [&](const PlainTensor& t, bool perRow) {
        std::vector<std::vector<double>> dash(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(m)));
        std::vector<double> diag(static_cast<std::size_t>(n));
        double headMax = -1e300;
        for (std::int64_t i = 0; i < n; ++i) {
            double sq = 0;
            for (std::int64_t c = 0; c < d; ++c) sq += std::pow(t.f32[static_cast<std::size_t>((h * n + i) * d + c)] * scale, 2);
            diag[static_cast<std::size_t>(i)] = sq / 2;
            for (std::int64_t f = 0; f < m; ++f) {
                double dot = 0;
                for (std::int64_t c = 0; c < d; ++c)
                    dot += t.f32[static_cast<std::size_t>((h * n + i) * d + c)] * scale * w.f32[static_cast<std::size_t>((h * m + f) * d + c)];
                dash[static_cast<std::size_t>(i)][static_cast<std::size_t>(f)] = dot;
                headMax = std::max(headMax, dot);
            }
        }
        if (!perRow) ref.keyMax = headMax;
        for (std::int64_t i = 0; i < n; ++i) {
            auto& row = dash[static_cast<std::size_t>(i)];
            const double stabiliser = perRow ? *std::max_element(row.begin(), row.end()) : headMax;
            for (double& v : row) v = (std::exp(v - diag[static_cast<std::size_t>(i)] - stabiliser) + eps) / std::sqrt(double(m));
        }
        return dash;
    };
    const auto phiQ = features(x.q, true), phiK = features(x.k, false);
    ref.out.assign(static_cast<std::size_t>(n * d), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
        double den = 0;
        std::vector<double> num(static_cast<std::size_t>(d), 0.0);
        for (std::int64_t j = 0; j < n; ++j) {
            if (!padding.empty() && padding[static_cast<std::size_t>(j)]) continue;
            double a = 0;
            for (std::int64_t f = 0; f < m; ++f) a += phiQ[static_cast<std::size_t>(i)][static_cast<std::size_t>(f)] * phiK[static_cast<std::size_t>(j)][static_cast<std::size_t>(f)];
            den += a;
            for (std::int64_t c = 0; c < d; ++c) num[static_cast<std::size_t>(c)] += a * x.v.f32[static_cast<std::size_t>((h * n + j) * d + c)];
        }
        for (std::int64_t c = 0; c < d; ++c) ref.out[static_cast<std::size_t>(i * d + c)] = num[static_cast<std::size_t>(c)] / den;
    }
    return ref;
}

TEST(PerformerAttention, StoredProjectionReproducesTheOutput) {
    auto engine = makeEngine();
    const std::int64_t heads = 2, n = 150, d = 8, m = 24;  // 150 rows: a full and a partial block of 128
    const auto x = randomQkv(heads, n, d, 95);
    auto r = runOk(*engine, variantRequest(x, "performer", {{"nb_features", m}}));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    const auto& w = res.diagnostics.at("projection");
    ASSERT_EQ(w.shape, (std::vector<std::int64_t>{heads, m, d}));
    double worst = 0;
    for (std::int64_t h = 0; h < heads; ++h) {
        const ReferenceHead ref = performerReference(x, w, h);
        for (std::int64_t e = 0; e < n * d; ++e)
            worst = std::max(worst, std::abs(res.output[static_cast<std::size_t>(h * n * d + e)] - ref.out[static_cast<std::size_t>(e)]));
    }
    EXPECT_LT(worst, 1e-5);
}

// A run without causality makes each key's features once, against the largest projection seen so
// far, and rescales its sums when a later block of keys (512 rows) holds a larger one. Keys made
// larger towards the end put the head's largest projection in the third block: the output, the
// stored key_shift and the weights recomputed from it still match the reference.
TEST(PerformerAttention, KeysMadeOnceAgreeWhenTheLargestProjectionComesLate) {
    auto engine = makeEngine();
    const std::int64_t heads = 2, n = 1300, d = 8, m = 16;
    auto x = randomQkv(heads, n, d, 97);
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t c = 0; c < d; ++c)
                x.k.f32[static_cast<std::size_t>((h * n + j) * d + c)] *= 0.4f + 1.2f * static_cast<float>(j) / static_cast<float>(n);
    std::vector<std::uint8_t> padding(static_cast<std::size_t>(n), 0);
    for (std::int64_t j : {3, 600, 1250, 1299}) padding[static_cast<std::size_t>(j)] = 1;
    auto request = variantRequest(x, "performer", {{"nb_features", m}});
    request.keyPadding = padding;
    auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    const auto& w = res.diagnostics.at("projection");
    const auto& keyShift = res.stats.at("key_shift");
    double worst = 0;
    for (std::int64_t h = 0; h < heads; ++h) {
        const ReferenceHead ref = performerReference(x, w, h, padding);
        EXPECT_NEAR(keyShift.f32[static_cast<std::size_t>(h)], ref.keyMax, 1e-5 * std::abs(ref.keyMax));
        for (std::int64_t e = 0; e < n * d; ++e)
            worst = std::max(worst, std::abs(res.output[static_cast<std::size_t>(h * n * d + e)] - ref.out[static_cast<std::size_t>(e)]));
        for (std::int64_t i : {0, 517, 1299}) {
            double rowSum = 0, expected = 0;
            for (std::int64_t j = 0; j < n; ++j) {
                rowSum += res.weightAt(h, i, j);
                expected += res.weightAt(h, i, j) * x.v.f32[static_cast<std::size_t>((h * n + j) * d)];
            }
            EXPECT_NEAR(rowSum, 1.0, 1e-5) << h << " " << i;
            EXPECT_NEAR(expected, ref.out[static_cast<std::size_t>(i * d)], 1e-5) << h << " " << i;
        }
    }
    EXPECT_LT(worst, 1e-5);
}

// key_eps_share against the features worked out in float64 from the stored projection W, the key
// shift and the keys: exp(w·k' − |k'|²/2 − shift) < feature_eps, with k' = k d^(-1/4).
TEST(PerformerAttention, KeyEpsShareCountsTheFeaturesUnderEps) {
    auto engine = makeEngine();
    const std::int64_t heads = 2, n = 40, d = 16, features = 64;
    for (const float scale : {0.3f, 2.0f}) {  // small keys: no feature under eps; large: most
        Qkv3 x{randomTensor(heads, n, d, 91, scale), randomTensor(heads, n, d, 92, scale), randomTensor(heads, n, d, 93, 1.0f)};
        auto r = runOk(*engine, variantRequest(x, "performer", {{"nb_features", features}}));
        ASSERT_TRUE(r);
        const auto& res = r->results[0];
        const auto& w = res.diagnostics.at("projection").f32;
        const auto& shift = res.stats.at("key_shift").f32;
        const auto& share = res.diagnostics.at("key_eps_share").f32;
        ASSERT_EQ(share.size(), static_cast<std::size_t>(heads));
        const double normalizer = std::pow(static_cast<double>(d), -0.25);
        for (std::int64_t h = 0; h < heads; ++h) {
            std::int64_t under = 0;
            for (std::int64_t j = 0; j < n; ++j) {
                const float* k = x.k.f32.data() + (h * n + j) * d;
                double sq = 0;
                for (std::int64_t c = 0; c < d; ++c) sq += double(k[c]) * k[c];
                for (std::int64_t f = 0; f < features; ++f) {
                    double dot = 0;
                    for (std::int64_t c = 0; c < d; ++c) dot += double(w[static_cast<std::size_t>((h * features + f) * d + c)]) * k[c] * normalizer;
                    under += std::exp(dot - sq * normalizer * normalizer / 2 - shift[static_cast<std::size_t>(h)]) < 1e-4;
                }
            }
            EXPECT_NEAR(share[static_cast<std::size_t>(h)], double(under) / double(n * features), 1.5 / double(n * features))
                << "scale " << scale << " head " << h;
            if (scale < 1) EXPECT_EQ(share[static_cast<std::size_t>(h)], 0.0f);
            else EXPECT_GT(share[static_cast<std::size_t>(h)], 0.5f);
        }
    }
}

// qk_norm rescales every query and key row before any variant: `full` is then the softmax of
// the rescaled scores, and the request JSON records the norm.
TEST(PerformerAttention, QkNormRescalesQueriesAndKeysBeforeTheVariants) {
    auto engine = makeEngine();
    const auto x = randomQkv(1, 12, 8, 95);
    auto request = variantRequest(x, "full", {});
    request.projection.qkNorm = 1.5;
    auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    EXPECT_NE(r->requestJson.find("\"qk_norm\":1.5"), std::string::npos) << r->requestJson;
    const auto unit = [&](const std::vector<float>& t, std::int64_t row) {
        std::vector<double> out(8);
        double sq = 0;
        for (int c = 0; c < 8; ++c) sq += double(t[static_cast<std::size_t>(row * 8 + c)]) * t[static_cast<std::size_t>(row * 8 + c)];
        for (int c = 0; c < 8; ++c) out[static_cast<std::size_t>(c)] = t[static_cast<std::size_t>(row * 8 + c)] * 1.5 / std::sqrt(sq);
        return out;
    };
    for (int i = 0; i < 12; ++i) {
        const auto q = unit(x.q.f32, i);
        std::vector<double> scores(12);
        double top = -1e300, total = 0;
        for (int j = 0; j < 12; ++j) {
            const auto k = unit(x.k.f32, j);
            double dot = 0;
            for (int c = 0; c < 8; ++c) dot += q[static_cast<std::size_t>(c)] * k[static_cast<std::size_t>(c)];
            scores[static_cast<std::size_t>(j)] = dot / std::sqrt(8.0);
            top = std::max(top, scores[static_cast<std::size_t>(j)]);
        }
        for (double& s : scores) total += (s = std::exp(s - top));
        for (int j = 0; j < 12; ++j) EXPECT_NEAR(r->results[0].weightAt(0, i, j), scores[static_cast<std::size_t>(j)] / total, 1e-6);
    }
}
