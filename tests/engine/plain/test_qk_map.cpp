// AttentionViz's query–key map (attnscope/qk_map.h): PCA of a hand-made point set, the key
// translation and scaling leave every softmax row unchanged, and a run's map places its n queries
// and m keys.

#include <attnscope/qk_map.h>
#include <attnscope/torch_free_run.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace attnscope::engine;

// Four points (±3, 0, 0) and (0, ±1, 0): the first axis is x with 18 of the 20 units of variance,
// the second y; the coordinates are the points' own x and y.
TEST(QkMap, PcaOfAKnownPointSet) {
    const std::vector<double> points{3, 0, 0, -3, 0, 0, 0, 1, 0, 0, -1, 0};
    std::vector<double> explained;
    const std::vector<double> xy = principalCoordinates(points, 4, 3, 2, &explained);
    const std::vector<double> expected{3, 0, -3, 0, 0, 1, 0, -1};
    for (std::size_t i = 0; i < xy.size(); ++i) EXPECT_NEAR(xy[i], expected[i], 1e-12) << i;
    EXPECT_NEAR(explained[0], 0.9, 1e-12);
    EXPECT_NEAR(explained[1], 0.1, 1e-12);
}

// Points along the direction (1, 2, 2)/3 plus a little noise: one axis explains nearly all.
TEST(QkMap, PcaFindsTheLine) {
    std::mt19937 rng(1);
    std::normal_distribution<double> noise(0.0, 0.01);
    std::vector<double> points;
    for (int t = -10; t <= 10; ++t)
        for (double c : {1.0, 2.0, 2.0}) points.push_back(t * c / 3.0 + noise(rng));
    std::vector<double> explained;
    const std::vector<double> xy = principalCoordinates(points, 21, 3, 2, &explained);
    EXPECT_GT(explained[0], 0.999);
    for (int t = -10; t <= 10; ++t) EXPECT_NEAR(xy[static_cast<std::size_t>((t + 10) * 2)], t, 0.05) << t;
}

// q·(k + c) adds q·c to every key of a row, and (s q)·(k / s) = q·k: each row's softmax stays.
TEST(QkMap, TheKeyTranslationAndScalingLeaveEverySoftmaxRow) {
    const std::int64_t n = 9, m = 13, d = 6;
    std::mt19937 rng(2);
    std::normal_distribution<double> draw;
    std::vector<double> q(static_cast<std::size_t>(n * d)), k(static_cast<std::size_t>(m * d));
    for (double& x : q) x = draw(rng) + 0.7;
    for (double& x : k) x = 3 * draw(rng) - 2.0;
    const auto rows = [&](const std::vector<double>& a, const std::vector<double>& b) {
        std::vector<double> w(static_cast<std::size_t>(n * m));
        for (std::int64_t i = 0; i < n; ++i) {
            double high = -INFINITY, sum = 0;
            for (std::int64_t j = 0; j < m; ++j) {
                double s = 0;
                for (std::int64_t c = 0; c < d; ++c) s += a[static_cast<std::size_t>(i * d + c)] * b[static_cast<std::size_t>(j * d + c)];
                w[static_cast<std::size_t>(i * m + j)] = s;
                high = std::max(high, s);
            }
            for (std::int64_t j = 0; j < m; ++j) sum += w[static_cast<std::size_t>(i * m + j)] = std::exp(w[static_cast<std::size_t>(i * m + j)] - high);
            for (std::int64_t j = 0; j < m; ++j) w[static_cast<std::size_t>(i * m + j)] /= sum;
        }
        return w;
    };
    const std::vector<double> before = rows(q, k);
    std::vector<double> q2 = q, k2 = k;
    const double s = translateAndScale(q2, k2, n, m, d, QkMapOptions{});
    EXPECT_NE(s, 1.0);
    for (std::int64_t c = 0; c < d; ++c) {  // the means now coincide (up to the scaling)
        double mq = 0, mk = 0;
        for (std::int64_t i = 0; i < n; ++i) mq += q2[static_cast<std::size_t>(i * d + c)] / s / n;
        for (std::int64_t j = 0; j < m; ++j) mk += k2[static_cast<std::size_t>(j * d + c)] * s / m;
        EXPECT_NEAR(mq, mk, 1e-12);
    }
    const std::vector<double> after = rows(q2, k2);
    for (std::size_t c = 0; c < before.size(); ++c) EXPECT_NEAR(after[c], before[c], 1e-12);
}

TEST(QkMap, ARunsMapPlacesItsQueriesAndKeys) {
    const std::int64_t heads = 2, n = 20, d = 8;
    std::mt19937 rng(3);
    std::normal_distribution<float> draw;
    std::vector<float> x(static_cast<std::size_t>(heads * n * d));
    const auto make = [&] {
        for (float& v : x) v = draw(rng);
        return PlainTensor::fromF32({heads, n, d}, x);
    };
    RunRequest request;
    request.source = QkvTensors{make(), make(), make()};
    request.variants.push_back(VariantRequest{"full", {}});
    auto run = runTorchFree(request, TorchFreeRunOptions{});
    ASSERT_TRUE(run.ok()) << run.error().message;
    auto map = queryKeyMap(**run, 0, 1);
    ASSERT_TRUE(map.ok()) << map.error().message;
    ASSERT_EQ(map->points.size(), static_cast<std::size_t>(2 * n));
    EXPECT_FALSE(map->points.front().isKey);
    EXPECT_TRUE(map->points.back().isKey);
    EXPECT_EQ(map->points.back().index, n - 1);
    EXPECT_GT(map->explained[0], map->explained[1]);
    EXPECT_LE(map->explained[0] + map->explained[1], 1.0 + 1e-12);
    EXPECT_NE(queryKeyMap(**run, 0, 2).error().message.find("head 2"), std::string::npos);
    EXPECT_NE(queryKeyMap(**run, 1, 0).error().message.find("result 1"), std::string::npos);
}

// Exact t-SNE keeps two far-apart clusters apart (each point's nearest neighbour in the plane is
// from its own cluster), and the same seed gives the same layout.
TEST(QkMap, TsneKeepsClustersApartAndRepeatsWithItsSeed) {
    std::mt19937 rng(4);
    std::normal_distribution<double> draw;
    const std::int64_t perCluster = 30, dims = 10;
    std::vector<double> points;
    for (int cluster = 0; cluster < 2; ++cluster)
        for (std::int64_t i = 0; i < perCluster; ++i)
            for (std::int64_t c = 0; c < dims; ++c) points.push_back(draw(rng) + (cluster == 0 ? 0.0 : 20.0));
    QkMapOptions options;
    options.method = QkMapOptions::Method::Tsne;
    options.iterations = 500;
    options.seed = 7;
    const std::vector<double> y = tsneCoordinates(points, 2 * perCluster, dims, options);
    ASSERT_EQ(y.size(), static_cast<std::size_t>(4 * perCluster));
    for (std::int64_t i = 0; i < 2 * perCluster; ++i) {
        std::int64_t nearest = -1;
        double best = INFINITY;
        for (std::int64_t j = 0; j < 2 * perCluster; ++j) {
            if (j == i) continue;
            const double dx = y[static_cast<std::size_t>(2 * i)] - y[static_cast<std::size_t>(2 * j)];
            const double dy = y[static_cast<std::size_t>(2 * i + 1)] - y[static_cast<std::size_t>(2 * j + 1)];
            if (dx * dx + dy * dy < best) best = dx * dx + dy * dy, nearest = j;
        }
        EXPECT_EQ(nearest / perCluster, i / perCluster) << "point " << i;
    }
    EXPECT_EQ(tsneCoordinates(points, 2 * perCluster, dims, options), y);
    options.seed = 8;
    EXPECT_NE(tsneCoordinates(points, 2 * perCluster, dims, options), y);
    // a cancel leaves nothing
    EXPECT_TRUE(tsneCoordinates(points, 2 * perCluster, dims, options, [](const Progress&) { return false; }).empty());
}

TEST(QkMap, TsneRefusesMoreThanItsPoints) {
    const std::int64_t n = kMaxTsnePoints / 2 + 1;
    RunRequest request;
    std::vector<float> x(static_cast<std::size_t>(n * 2), 0.5f);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.1f;
    request.source = QkvTensors{PlainTensor::fromF32({1, n, 2}, x), PlainTensor::fromF32({1, n, 2}, x), PlainTensor::fromF32({1, n, 2}, x)};
    request.variants.push_back(VariantRequest{"longformer", {{"window", std::int64_t{2}}}});
    auto run = runTorchFree(request, TorchFreeRunOptions{});
    ASSERT_TRUE(run.ok()) << run.error().message;
    QkMapOptions options;
    options.method = QkMapOptions::Method::Tsne;
    auto map = queryKeyMap(**run, 0, 0, options);
    ASSERT_FALSE(map.ok());
    EXPECT_NE(map.error().message.find("at most 4096 points"), std::string::npos) << map.error().message;
}

// umap-learn's find_ab_params(spread=1, min_dist=0.1) gives a = 1.57694, b = 0.89506.
TEST(QkMap, UmapCurveAsUmapLearnFitsIt) {
    double a = 0, b = 0;
    umapCurve(0.1, 1.0, a, b);
    EXPECT_NEAR(a, 1.57694, 2e-3);
    EXPECT_NEAR(b, 0.89506, 2e-3);
}

// Neighbours at 0 (itself), 1, 2, 3: ρ = 1, and σ solves 1 + u + u² = log2(4) = 2 with u = e^(−1/σ):
// u = (√5 − 1)/2 = 0.618034, σ = −1/ln u = 2.078087; the memberships are 1, u, u².
TEST(QkMap, UmapMembershipsOfAHandWorkedRow) {
    std::vector<double> memberships;
    const double sigma = umapMemberships({0.0, 1.0, 2.0, 3.0}, 4, memberships);
    const double u = (std::sqrt(5.0) - 1.0) / 2.0;
    EXPECT_NEAR(sigma, -1.0 / std::log(u), 1e-4);
    ASSERT_EQ(memberships.size(), 3u);
    EXPECT_DOUBLE_EQ(memberships[0], 1.0);
    EXPECT_NEAR(memberships[1], u, 1e-5);
    EXPECT_NEAR(memberships[2], u * u, 1e-5);
}

TEST(QkMap, UmapKeepsClustersApartAndRepeatsWithItsSeed) {
    std::mt19937 rng(5);
    std::normal_distribution<double> draw;
    const std::int64_t perCluster = 40, dims = 8;
    std::vector<double> points;
    for (int cluster = 0; cluster < 3; ++cluster)
        for (std::int64_t i = 0; i < perCluster; ++i)
            for (std::int64_t c = 0; c < dims; ++c) points.push_back(draw(rng) + (c == cluster ? 15.0 : 0.0));
    QkMapOptions options;
    options.method = QkMapOptions::Method::Umap;
    options.seed = 3;
    const std::int64_t rows = 3 * perCluster;
    const std::vector<double> y = umapCoordinates(points, rows, dims, options);
    ASSERT_EQ(y.size(), static_cast<std::size_t>(2 * rows));
    for (std::int64_t i = 0; i < rows; ++i) {
        std::int64_t nearest = -1;
        double best = INFINITY;
        for (std::int64_t j = 0; j < rows; ++j) {
            if (j == i) continue;
            const double dx = y[static_cast<std::size_t>(2 * i)] - y[static_cast<std::size_t>(2 * j)];
            const double dy = y[static_cast<std::size_t>(2 * i + 1)] - y[static_cast<std::size_t>(2 * j + 1)];
            if (dx * dx + dy * dy < best) best = dx * dx + dy * dy, nearest = j;
        }
        EXPECT_EQ(nearest / perCluster, i / perCluster) << "point " << i;
    }
    EXPECT_EQ(umapCoordinates(points, rows, dims, options), y);
    options.seed = 4;
    EXPECT_NE(umapCoordinates(points, rows, dims, options), y);
    EXPECT_TRUE(umapCoordinates(points, rows, dims, options, [](const Progress&) { return false; }).empty());
}
