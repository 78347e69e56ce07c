// `full` against hand-computed cases and an independent double-precision reference.

#include <attnscope/engine.h>

#include <gtest/gtest.h>

#include "../support/weights_support.h"

#include <cmath>
#include <random>

using namespace attnscope::engine;

namespace {

std::unique_ptr<Engine> makeEngine() {
    EngineOptions options;
    options.threads = 1;
    auto engine = Engine::create(options);
    EXPECT_TRUE(engine.ok());
    return std::move(engine.value());
}

RunRequest qkvRequest(PlainTensor q, PlainTensor k, PlainTensor v, bool causal = false) {
    RunRequest request;
    request.source = QkvTensors{std::move(q), std::move(k), std::move(v)};
    VariantRequest full;
    full.id = "full";
    full.params["causal"] = causal;
    request.variants.push_back(full);
    return request;
}

PlainTensor randomTensor(std::int64_t h, std::int64_t n, std::int64_t d, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, 1.5f);
    std::vector<float> values(static_cast<std::size_t>(h * n * d));
    for (auto& x : values) x = dist(gen);
    return PlainTensor::fromF32({h, n, d}, values);
}

// Independent reference: double precision, straight from the definition.
struct Reference {
    std::vector<double> weights, output;
};
Reference referenceAttention(const PlainTensor& q, const PlainTensor& k, const PlainTensor& v, bool causal) {
    const auto h = q.shape[0], n = q.shape[1], d = q.shape[2], m = k.shape[1];
    Reference ref;
    ref.weights.assign(static_cast<std::size_t>(h * n * m), 0.0);
    ref.output.assign(static_cast<std::size_t>(h * n * d), 0.0);
    for (std::int64_t hh = 0; hh < h; ++hh)
        for (std::int64_t i = 0; i < n; ++i) {
            std::vector<double> s(static_cast<std::size_t>(m), -INFINITY);
            double mx = -INFINITY;
            for (std::int64_t j = 0; j < m; ++j) {
                if (causal && j > i + (m - n)) continue;
                double dot = 0;
                for (std::int64_t c = 0; c < d; ++c)
                    dot += double(q.f32[(hh * n + i) * d + c]) * double(k.f32[(hh * m + j) * d + c]);
                s[j] = dot / std::sqrt(double(d));
                mx = std::max(mx, s[j]);
            }
            double sum = 0;
            for (std::int64_t j = 0; j < m; ++j) sum += std::isinf(s[j]) ? 0 : std::exp(s[j] - mx);
            for (std::int64_t j = 0; j < m; ++j) {
                const double w = std::isinf(s[j]) ? 0 : std::exp(s[j] - mx) / sum;
                ref.weights[(hh * n + i) * m + j] = w;
                for (std::int64_t c = 0; c < d; ++c) ref.output[(hh * n + i) * d + c] += w * v.f32[(hh * m + j) * d + c];
            }
        }
    return ref;
}

}  // namespace

TEST(FullAttention, HandComputed3x3) {
    // d = 1 so the scale is 1; k_j = ln(j + 1) makes softmax weights proportional to (j+1)^q_i.
    auto q = PlainTensor::fromF32({1, 3, 1}, {1.0f, 2.0f, 0.0f});
    auto k = PlainTensor::fromF32({1, 3, 1}, {0.0f, std::log(2.0f), std::log(3.0f)});
    auto v = PlainTensor::fromF32({1, 3, 1}, {1.0f, 2.0f, 3.0f});
    auto engine = makeEngine();
    auto result = engine->run(qkvRequest(q, k, v, false));
    ASSERT_TRUE(result.ok()) << result.error().message;
    const auto& r = (*result)->results[0];
    const double expected[3][3] = {{1 / 6.0, 2 / 6.0, 3 / 6.0}, {1 / 14.0, 4 / 14.0, 9 / 14.0}, {1 / 3.0, 1 / 3.0, 1 / 3.0}};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(r.weightAt(0, i, j), expected[i][j], 1e-6) << i << "," << j;
    EXPECT_NEAR(r.output[0], 14.0 / 6.0, 1e-5);
    EXPECT_NEAR(r.output[1], 36.0 / 14.0, 1e-5);
    EXPECT_NEAR(r.output[2], 2.0, 1e-5);

    auto causal = engine->run(qkvRequest(q, k, v, true));
    ASSERT_TRUE(causal.ok());
    const auto& c = (*causal)->results[0];
    const double expectedCausal[3][3] = {{1, 0, 0}, {1 / 5.0, 4 / 5.0, 0}, {1 / 3.0, 1 / 3.0, 1 / 3.0}};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(c.weightAt(0, i, j), expectedCausal[i][j], 1e-6);
    EXPECT_NEAR(c.output[0], 1.0, 1e-6);
    EXPECT_NEAR(c.output[1], 1.8, 1e-5);
    EXPECT_NEAR(c.output[2], 2.0, 1e-5);
}

TEST(FullAttention, HandComputed4x4WithPadding) {
    // d = 4, scale 1/2, K = I, q_i = 2 s_i: the scores are exactly s_i. V = I: output = weights.
    const float l2 = std::log(2.0f), l3 = std::log(3.0f), l4 = std::log(4.0f);
    std::vector<float> s = {0, 0, 0, 0, 0, l2, l3, l4, l4, l3, l2, 0, 0, l3, 0, 0};
    for (auto& x : s) x *= 2.0f;
    std::vector<float> eye(16, 0.0f);
    for (int i = 0; i < 4; ++i) eye[i * 5] = 1.0f;
    auto q = PlainTensor::fromF32({1, 4, 4}, s);
    auto k = PlainTensor::fromF32({1, 4, 4}, eye);
    auto v = PlainTensor::fromF32({1, 4, 4}, eye);
    auto engine = makeEngine();
    auto result = engine->run(qkvRequest(q, k, v));
    ASSERT_TRUE(result.ok());
    const auto& r = (*result)->results[0];
    const double expected[4][4] = {{.25, .25, .25, .25}, {.1, .2, .3, .4}, {.4, .3, .2, .1}, {1 / 6.0, .5, 1 / 6.0, 1 / 6.0}};
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            EXPECT_NEAR(r.weightAt(0, i, j), expected[i][j], 1e-6);
            EXPECT_NEAR(r.output[static_cast<std::size_t>(i * 4 + j)], expected[i][j], 1e-6);
        }

    // Padding key 3 renormalises over keys 0..2; the padded query row 3 is zeroed (status 2).
    auto padded = qkvRequest(q, k, v);
    padded.keyPadding = {0, 0, 0, 1};
    auto pr = engine->run(padded);
    ASSERT_TRUE(pr.ok());
    const auto& p = (*pr)->results[0];
    const double expectedPadded[3][3] = {{1 / 3.0, 1 / 3.0, 1 / 3.0}, {1 / 6.0, 2 / 6.0, 3 / 6.0}, {4 / 9.0, 3 / 9.0, 2 / 9.0}};
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(p.weightAt(0, i, j), expectedPadded[i][j], 1e-6);
        EXPECT_EQ(p.weightAt(0, i, 3), 0.0f);
    }
    for (int j = 0; j < 4; ++j) EXPECT_EQ(p.weightAt(0, 3, j), 0.0f);
    ASSERT_EQ(p.rowStatus.u8.size(), 4u);
    EXPECT_EQ(p.rowStatus.u8[3], 2);
    EXPECT_EQ(p.rowStatus.u8[0], 0);
}

TEST(FullAttention, MatchesReferenceAcrossBlocks) {
    // n = 300 spans two query blocks and a ragged last block.
    const std::int64_t h = 2, n = 300, d = 16;
    auto q = randomTensor(h, n, d, 1), k = randomTensor(h, n, d, 2), v = randomTensor(h, n, d, 3);
    auto engine = makeEngine();
    for (bool causal : {false, true}) {
        auto result = engine->run(qkvRequest(q, k, v, causal));
        ASSERT_TRUE(result.ok()) << result.error().message;
        const auto& r = (*result)->results[0];
        const std::vector<float> weights = test_support::denseWeights(r);
        const Reference ref = referenceAttention(q, k, v, causal);
        double maxW = 0, maxO = 0;
        for (std::size_t i = 0; i < ref.weights.size(); ++i) maxW = std::max(maxW, std::abs(ref.weights[i] - weights[i]));
        for (std::size_t i = 0; i < ref.output.size(); ++i) maxO = std::max(maxO, std::abs(ref.output[i] - r.output[i]));
        EXPECT_LT(maxW, 1e-6) << "causal=" << causal;
        EXPECT_LT(maxO, 1e-5) << "causal=" << causal;
        for (std::int64_t hh = 0; hh < h; ++hh)
            for (std::int64_t i = 0; i < n; ++i) {
                double sum = 0;
                for (std::int64_t j = 0; j < n; ++j) {
                    const float w = weights[static_cast<std::size_t>((hh * n + i) * n + j)];
                    sum += w;
                    if (causal && j > i) {
                        ASSERT_EQ(w, 0.0f) << "upper triangle must be exactly 0";
                    }
                }
                EXPECT_NEAR(sum, 1.0, 1e-5);
            }
    }
}

// Past the dense limit nothing of size n x m is kept, yet every weight is the same (recomputed from
// the row log-sum-exp) and so is the output.
TEST(FullAttention, WeightsBeyondTheDenseLimitAreTheSame) {
    const std::int64_t h = 2, n = 130, d = 8;
    auto q = randomTensor(h, n, d, 4), k = randomTensor(h, n, d, 5), v = randomTensor(h, n, d, 6);
    auto engine = makeEngine();
    auto within = engine->run(qkvRequest(q, k, v, true));
    auto request = qkvRequest(q, k, v, true);
    request.denseLimit = 16;
    auto beyond = engine->run(request);
    ASSERT_TRUE(within.ok() && beyond.ok());
    EXPECT_EQ((*beyond)->results[0].stats.at("row_sum").shape, (std::vector<std::int64_t>{h, n}));
    for (std::int64_t i = 0; i < h * n * d; ++i)
        EXPECT_NEAR((*within)->results[0].output[i], (*beyond)->results[0].output[i], 1e-6);
    EXPECT_EQ(test_support::denseWeights((*within)->results[0]), test_support::denseWeights((*beyond)->results[0]));
}

TEST(FullAttention, QueryWithNoAdmissibleKeyGetsZeroRowNotNaN) {
    auto q = randomTensor(1, 4, 4, 7), k = randomTensor(1, 4, 4, 8), v = randomTensor(1, 4, 4, 9);
    auto engine = makeEngine();
    // Causal with keys 0 and 1 padded: queries 0 and 1 have no admissible key.
    auto request = qkvRequest(q, k, v, true);
    request.keyPadding = {1, 1, 0, 0};
    auto result = engine->run(request);
    ASSERT_TRUE(result.ok());
    const auto& r = (*result)->results[0];
    EXPECT_EQ(r.emptyRowCount, 0);  // rows 0 and 1 are padded queries (status 2), not empty
    // Cross attention (m != n) so padding does not zero queries: rows are truly empty.
    auto k2 = randomTensor(1, 2, 4, 10), v2 = randomTensor(1, 2, 4, 11);
    auto cross = qkvRequest(q, k2, v2, false);
    cross.keyPadding = {1, 1};
    auto rc = engine->run(cross);
    ASSERT_TRUE(rc.ok()) << rc.error().message;
    const auto& c = (*rc)->results[0];
    EXPECT_EQ(c.emptyRowCount, 4);
    for (std::int64_t i = 0; i < 4 * 4; ++i) {
        EXPECT_FALSE(std::isnan(c.output[i]));
        EXPECT_EQ(c.output[i], 0.0f);
    }
    EXPECT_EQ(c.rowStatus.u8, (std::vector<std::uint8_t>{1, 1, 1, 1}));
    EXPECT_FALSE((*rc)->warnings.empty());
}

TEST(FullAttention, RepeatedRunReusesBuffersOnlyWhenReleased) {
    auto q = randomTensor(1, 64, 8, 12), k = randomTensor(1, 64, 8, 13), v = randomTensor(1, 64, 8, 14);
    auto engine = makeEngine();
    const float* first = nullptr;
    {
        auto a = engine->run(qkvRequest(q, k, v));
        ASSERT_TRUE(a.ok());
        first = (*a)->results[0].output.data();
    }
    auto b = engine->run(qkvRequest(q, k, v));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ((*b)->results[0].output.data(), first) << "released buffer should be reused";
    auto c = engine->run(qkvRequest(q, k, v));
    ASSERT_TRUE(c.ok());
    EXPECT_NE((*c)->results[0].output.data(), (*b)->results[0].output.data()) << "held result must not be overwritten";
    for (std::int64_t i = 0; i < 64 * 8; ++i) EXPECT_EQ((*b)->results[0].output[i], (*c)->results[0].output[i]);
    EXPECT_EQ(test_support::denseWeights((*b)->results[0]), test_support::denseWeights((*c)->results[0]));
}
