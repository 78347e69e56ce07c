// `routing`: k-means steps checked against the stored centroid history, top-w clusters rebuilt
// from the stored centroids, outputs against a double-precision scatter-mean of per-cluster
// softmaxes, the argmax graph against the masked softmax, unrouted tokens (VARIANTS.md §7).

#include "sparse_test_support.h"

#include <algorithm>
#include <numeric>

using namespace sparse_test;

namespace {

/// Routing vectors [q̂; k̂] of head h, [2n][d] in double.
std::vector<std::vector<double>> routingVectors(const Qkv3& x, int h) {
    const std::int64_t n = x.q.shape[1], d = x.q.shape[2];
    std::vector<std::vector<double>> out;
    for (const PlainTensor* t : {&x.q, &x.k})
        for (std::int64_t i = 0; i < n; ++i) {
            std::vector<double> row(static_cast<std::size_t>(d));
            double norm = 0;
            for (std::int64_t c = 0; c < d; ++c) norm += std::pow(row[c] = t->f32[static_cast<std::size_t>((h * n + i) * d + c)], 2);
            for (auto& v : row) v /= std::max(std::sqrt(norm), 1e-12);
            out.push_back(row);
        }
    return out;
}

double dotWith(const std::vector<double>& a, const float* b) {
    double s = 0;
    for (std::size_t c = 0; c < a.size(); ++c) s += a[c] * b[c];
    return s;
}

ParamValues routingParams(std::int64_t clusters, std::int64_t iterations, std::int64_t window, const char* mode, bool causal) {
    return {{"clusters", clusters}, {"iterations", iterations}, {"window_size", window}, {"mode", std::string(mode)},
            {"causal", causal}};
}

}  // namespace

TEST(RoutingAttention, KmeansAssignmentsAreTheNearestStoredCentroids) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 30, 6, 301);
    auto r = runOk(*engine, variantRequest(x, "routing", routingParams(4, 3, 0, "topw", false)));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    const auto& hist = res.diagnostics.at("centroid_history");
    const auto& assign = res.diagnostics.at("assignments");
    const auto& nearest = res.diagnostics.at("nearest");
    ASSERT_EQ(hist.shape, (std::vector<std::int64_t>{2, 4, 4, 6}));
    ASSERT_EQ(assign.shape, (std::vector<std::int64_t>{2, 3, 2, 30}));
    ASSERT_EQ(res.diagnostics.at("centroids").shape, (std::vector<std::int64_t>{2, 4, 6}));
    int checked = 0;
    for (int h = 0; h < 2; ++h) {
        const auto xs = routingVectors(x, h);
        // The initial centroids are routing vectors.
        for (int c = 0; c < 4; ++c) {
            const float* mu = hist.f32.data() + ((h * 4 + 0) * 4 + c) * 6;
            double best = -1;
            for (const auto& v : xs) best = std::max(best, dotWith(v, mu));
            EXPECT_NEAR(best, 1.0, 1e-5);
        }
        for (int step = 0; step <= 3; ++step) {
            const float* mu = hist.f32.data() + (h * 4 + step) * 4 * 6;
            std::vector<std::vector<double>> sums(4, std::vector<double>(6, 0.0));
            std::vector<int> sizes(4, 0);
            for (std::size_t t = 0; t < xs.size(); ++t) {
                std::vector<double> sim(4);
                for (int c = 0; c < 4; ++c) sim[static_cast<std::size_t>(c)] = dotWith(xs[t], mu + c * 6);
                const auto best = std::max_element(sim.begin(), sim.end()) - sim.begin();
                std::vector<double> sortedSim = sim;
                std::sort(sortedSim.rbegin(), sortedSim.rend());
                const std::int64_t got = step < 3 ? assign.i64[static_cast<std::size_t>((h * 3 + step) * 60) + t]
                                                  : nearest.i64[static_cast<std::size_t>(h * 60) + t];
                if (sortedSim[0] - sortedSim[1] > 1e-5) {
                    EXPECT_EQ(got, best) << "head " << h << " step " << step << " vector " << t;
                    ++checked;
                }
                ++sizes[static_cast<std::size_t>(got)];
                for (int c = 0; c < 6; ++c) sums[static_cast<std::size_t>(got)][static_cast<std::size_t>(c)] += xs[t][static_cast<std::size_t>(c)];
            }
            if (step == 3) break;
            // The next centroids: normalised sums; an empty cluster keeps its centroid.
            const float* next = mu + 4 * 6;
            for (int c = 0; c < 4; ++c) {
                double norm = 0;
                for (double v : sums[static_cast<std::size_t>(c)]) norm += v * v;
                for (int e = 0; e < 6; ++e) {
                    const double expected = sizes[static_cast<std::size_t>(c)] ? sums[static_cast<std::size_t>(c)][static_cast<std::size_t>(e)] / std::sqrt(norm)
                                                                               : mu[c * 6 + e];
                    EXPECT_NEAR(next[c * 6 + e], expected, 1e-5);
                }
            }
        }
    }
    EXPECT_GT(checked, 400);
    const auto& centroids = res.diagnostics.at("centroids").f32;
    for (int h = 0; h < 2; ++h)  // the final centroids are the last step of the history
        EXPECT_EQ(std::vector<float>(centroids.begin() + h * 24, centroids.begin() + (h + 1) * 24),
                  std::vector<float>(hist.f32.begin() + (h * 4 + 3) * 24, hist.f32.begin() + (h * 4 + 4) * 24));
    // Reproducible from the seed; another seed starts elsewhere.
    auto again = runOk(*engine, variantRequest(x, "routing", routingParams(4, 3, 0, "topw", false)));
    EXPECT_EQ(again->results[0].diagnostics.at("centroid_history").f32, hist.f32);
    auto request = variantRequest(x, "routing", routingParams(4, 3, 0, "topw", false));
    request.projection.seed = 99;
    auto other = runOk(*engine, request);
    EXPECT_NE(other->results[0].diagnostics.at("centroid_history").f32, hist.f32);
}

TEST(RoutingAttention, TopwOutputIsTheScatterMeanOverTheStoredClusters) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 24, 4, 311);
    const std::int64_t n = 24, d = 4, clusters = 4, w = 7;
    for (bool causal : {false, true}) {
        auto r = runOk(*engine, variantRequest(x, "routing", routingParams(clusters, 4, w, "topw", causal)));
        ASSERT_TRUE(r);
        const auto& res = r->results[0];
        const auto& mu = res.diagnostics.at("centroids");
        const auto& cq = res.diagnostics.at("cluster_queries");
        const auto& ck = res.diagnostics.at("cluster_keys");
        ASSERT_EQ(cq.shape, (std::vector<std::int64_t>{2, clusters, w}));
        double maxW = 0, maxO = 0;
        for (int h = 0; h < 2; ++h) {
            const auto xs = routingVectors(x, h);
            // The stored lists are each cluster's top-w queries and keys by similarity.
            for (std::int64_t c = 0; c < clusters; ++c)
                for (int side = 0; side < 2; ++side) {
                    std::vector<std::pair<double, std::int64_t>> sims;
                    for (std::int64_t t = 0; t < n; ++t)
                        sims.emplace_back(-dotWith(xs[static_cast<std::size_t>(side * n + t)], mu.f32.data() + (h * clusters + c) * d), t);
                    std::sort(sims.begin(), sims.end());
                    if (sims[w].first - sims[w - 1].first < 1e-5) continue;  // near tie at the cut
                    std::vector<std::int64_t> expected;
                    for (std::int64_t t = 0; t < w; ++t) expected.push_back(sims[static_cast<std::size_t>(t)].second);
                    std::sort(expected.begin(), expected.end());
                    const auto& stored = side == 0 ? cq : ck;
                    EXPECT_EQ(std::vector<std::int64_t>(stored.i64.begin() + (h * clusters + c) * w,
                                                        stored.i64.begin() + (h * clusters + c + 1) * w),
                              expected);
                }
            // Reference: W[i][j] = sum over clusters c with i in Q_c of softmax_c(i, j) / (count_i + 1e-5).
            std::vector<double> dense(static_cast<std::size_t>(n * n), 0.0);
            std::vector<int> count(static_cast<std::size_t>(n), 0), mult(static_cast<std::size_t>(n * n), 0);
            for (std::int64_t c = 0; c < clusters; ++c)
                for (std::int64_t a = 0; a < w; ++a) ++count[static_cast<std::size_t>(cq.i64[static_cast<std::size_t>((h * clusters + c) * w + a)])];
            for (std::int64_t c = 0; c < clusters; ++c)
                for (std::int64_t a = 0; a < w; ++a) {
                    const std::int64_t i = cq.i64[static_cast<std::size_t>((h * clusters + c) * w + a)];
                    std::vector<std::pair<std::int64_t, double>> s;
                    for (std::int64_t b = 0; b < w; ++b) {
                        const std::int64_t j = ck.i64[static_cast<std::size_t>((h * clusters + c) * w + b)];
                        if (causal && j > i) continue;
                        double dot = 0;
                        for (std::int64_t e = 0; e < d; ++e)
                            dot += double(x.q.f32[static_cast<std::size_t>((h * n + i) * d + e)]) * x.k.f32[static_cast<std::size_t>((h * n + j) * d + e)];
                        s.emplace_back(j, dot / std::sqrt(double(d)));
                    }
                    double mx = -1e300, z = 0;
                    for (const auto& [j, v] : s) mx = std::max(mx, v);
                    for (const auto& [j, v] : s) z += std::exp(v - mx);
                    for (const auto& [j, v] : s) {
                        dense[static_cast<std::size_t>(i * n + j)] += std::exp(v - mx) / z / (count[static_cast<std::size_t>(i)] + 1e-5);
                        ++mult[static_cast<std::size_t>(i * n + j)];
                    }
                }
            EXPECT_EQ(multiplicity(res, h), mult);
            for (std::int64_t i = 0; i < n; ++i) {
                for (std::int64_t j = 0; j < n; ++j)
                    maxW = std::max(maxW, std::abs(res.weightAt(h, i, j) - dense[static_cast<std::size_t>(i * n + j)]));
                for (std::int64_t e = 0; e < d; ++e) {
                    double o = 0;
                    for (std::int64_t j = 0; j < n; ++j) o += dense[static_cast<std::size_t>(i * n + j)] * x.v.f32[static_cast<std::size_t>((h * n + j) * d + e)];
                    maxO = std::max(maxO, std::abs(o - res.output[static_cast<std::size_t>((h * n + i) * d + e)]));
                }
                EXPECT_EQ(res.diagnostics.at("routed_count").i64[static_cast<std::size_t>(h * n + i)], count[static_cast<std::size_t>(i)]);
            }
        }
        EXPECT_LT(maxW, 1e-6) << "causal " << causal;
        EXPECT_LT(maxO, 1e-5) << "causal " << causal;
    }
}

TEST(RoutingAttention, ArgmaxModeIsTheSameClusterGraph) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 20, 4, 321);
    for (bool causal : {false, true}) {
        auto r = runOk(*engine, variantRequest(x, "routing", routingParams(3, 5, 0, "argmax", causal)));
        ASSERT_TRUE(r);
        const auto& res = r->results[0];
        const auto& nearest = res.diagnostics.at("nearest");
        expectPatternEquals(res, [&](int h, std::int64_t i, std::int64_t j) {
            const std::int64_t n = 20;
            return nearest.i64[static_cast<std::size_t>(h * 2 * n + i)] == nearest.i64[static_cast<std::size_t>(h * 2 * n + n + j)] &&
                   (!causal || j <= i);
        });
        for (const auto& m : {multiplicity(res, 0), multiplicity(res, 1)})
            for (int v : m) EXPECT_LE(v, 1);
        expectMatchesMaskedSoftmax(res, x.q, x.k, x.v);
    }
}

TEST(RoutingAttention, UnroutedTokensOutputZeroAndAreFlagged) {
    auto engine = makeEngine();
    const auto x = randomQkv(1, 16, 4, 331);
    auto r = runOk(*engine, variantRequest(x, "routing", routingParams(2, 2, 2, "topw", false)));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    const auto& count = res.diagnostics.at("routed_count");
    int unrouted = 0;
    ASSERT_EQ(res.rowStatus.shape, (std::vector<std::int64_t>{1, 16}));
    for (std::int64_t i = 0; i < 16; ++i) {
        if (count.i64[static_cast<std::size_t>(i)] > 0) {
            EXPECT_EQ(res.rowStatus.u8[static_cast<std::size_t>(i)], 0);
            continue;
        }
        ++unrouted;
        EXPECT_EQ(res.rowStatus.u8[static_cast<std::size_t>(i)], 1);
        res.weights->forEachRow(0, i, i + 1, [](const RowEntries& row) {
            EXPECT_EQ(row.count, 0);
            return true;
        });
        for (int c = 0; c < 4; ++c) EXPECT_EQ(res.output[static_cast<std::size_t>(i * 4 + c)], 0.0f);
    }
    EXPECT_GE(unrouted, 12);  // at most 2 clusters x 2 queries are routed
    EXPECT_EQ(res.emptyRowCount, unrouted);
    ASSERT_FALSE(r->warnings.empty());
    EXPECT_NE(r->warnings.back().find("no admissible key"), std::string::npos);
}

TEST(RoutingAttention, DefaultsClampsAndErrors) {
    auto engine = makeEngine();
    const auto x = randomQkv(1, 10, 4, 341);
    // clusters 0 = round(sqrt(10)) = 3; window 0 = ceil(10 / 3) = 4.
    auto r = runOk(*engine, variantRequest(x, "routing", {}));
    ASSERT_TRUE(r);
    EXPECT_EQ(std::get<std::int64_t>(r->results[0].params.at("clusters")), 3);
    EXPECT_EQ(std::get<std::int64_t>(r->results[0].params.at("window_size")), 4);
    EXPECT_EQ(r->results[0].diagnostics.at("centroids").shape, (std::vector<std::int64_t>{1, 3, 4}));
    auto clamped = runOk(*engine, variantRequest(x, "routing", {{"clusters", std::int64_t{50}}, {"window_size", std::int64_t{99}}}));
    ASSERT_TRUE(clamped);
    EXPECT_NE(clamped->warnings[0].find("using clusters = 10"), std::string::npos);
    EXPECT_EQ(std::get<std::int64_t>(clamped->results[0].params.at("window_size")), 10);
    EXPECT_FALSE(errorOf(*engine, variantRequest(x, "routing", {{"mode", std::string("kmeans")}})).empty());
    EXPECT_FALSE(errorOf(*engine, variantRequest(x, "routing", {{"iterations", std::int64_t{0}}})).empty());
    // Nothing is listed: the weights come from the clusters and the row statistics.
    auto again = runOk(*engine, variantRequest(x, "routing", {}));
    ASSERT_TRUE(again);
    EXPECT_EQ(again->results[0].diagnostics.count("pattern_listed"), 0u);
    EXPECT_EQ(again->results[0].stats.count("row_sum"), 1u);
}

TEST(RoutingAttention, PaddedKeysGetNoWeightAndPaddedQueriesAreZeroed) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 12, 4, 351);
    auto request = variantRequest(x, "routing", routingParams(3, 2, 6, "topw", false));
    request.keyPadding = {0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
    auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    ASSERT_EQ(res.rowStatus.shape, (std::vector<std::int64_t>{2, 12}));
    for (int h = 0; h < 2; ++h) {
        for (int i : {1, 9}) {
            EXPECT_EQ(res.rowStatus.u8[static_cast<std::size_t>(h * 12 + i)], 2);
            for (int c = 0; c < 4; ++c) EXPECT_EQ(res.output[static_cast<std::size_t>((h * 12 + i) * 4 + c)], 0.0f);
        }
        for (std::int64_t i = 0; i < 12; ++i) {
            EXPECT_EQ(res.weightAt(h, i, 1), 0.0f);
            EXPECT_EQ(res.weightAt(h, i, 9), 0.0f);
        }
    }
}

// Long inputs take the sampled-threshold selection: its lists must still be each cluster's exact
// top w, and at an exact tie (keys repeated 32 times) the lower token indices.
TEST(RoutingAttention, LongInputsTakeTheExactTopWWithTiesToTheLowerIndex) {
    auto engine = makeEngine();
    const std::int64_t n = 2048, d = 8, clusters = 16, w = 48;  // 48: cuts inside a group of 32
    auto x = randomQkv(1, n, d, 361);
    for (std::int64_t t = 64; t < n; ++t)
        std::copy_n(x.k.f32.begin() + (t % 64) * d, d, x.k.f32.begin() + t * d);
    auto r = runOk(*engine, variantRequest(x, "routing", routingParams(clusters, 2, w, "topw", false)));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    const auto& mu = res.diagnostics.at("centroids");
    const auto xs = routingVectors(x, 0);
    int checked = 0, tiedCuts = 0;
    for (std::int64_t c = 0; c < clusters; ++c)
        for (int side = 0; side < 2; ++side) {
            std::vector<std::pair<double, std::int64_t>> sims;
            for (std::int64_t t = 0; t < n; ++t)
                sims.emplace_back(-dotWith(xs[static_cast<std::size_t>(side * n + t)], mu.f32.data() + c * d), t);
            std::sort(sims.begin(), sims.end());
            const double gap = sims[w].first - sims[w - 1].first;
            if (gap > 0 && gap < 1e-5) continue;  // a near tie that float rounding may order either way
            tiedCuts += gap == 0;
            std::vector<std::int64_t> expected;
            for (std::int64_t t = 0; t < w; ++t) expected.push_back(sims[static_cast<std::size_t>(t)].second);
            std::sort(expected.begin(), expected.end());
            const auto& stored = res.diagnostics.at(side == 0 ? "cluster_queries" : "cluster_keys");
            EXPECT_EQ(std::vector<std::int64_t>(stored.i64.begin() + c * w, stored.i64.begin() + (c + 1) * w), expected)
                << "cluster " << c << " side " << side;
            ++checked;
        }
    EXPECT_GE(checked, 28);
    EXPECT_GE(tiedCuts, 8);  // every key cut lies inside a group of 32 equal keys
}
