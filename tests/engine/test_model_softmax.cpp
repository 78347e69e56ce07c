// `model_softmax`, the computation behind a model layer's own attention: every score term (scale,
// soft-cap, causal mask, sliding window, relative bias, sinks) against an independent double-precision
// softmax written here from the definitions, its tiles against its own output, and the result
// file's round trip.

#include "sparse_test_support.h"

#include <attnscope/result_file.h>

#include <cmath>
#include <filesystem>

using namespace sparse_test;

namespace {

struct Terms {
    bool causal = false;
    std::int64_t window = 0;
    double scale = 0, softcap = 0;
    std::vector<float> bias;  // [H, n + m - 1] or empty
    std::vector<float> sinks;  // [H] or empty
};

// w[h][i][j] and out[h][i][c], from the definitions.
struct Expected {
    std::vector<double> weights, output;
};
Expected expected(const Qkv3& x, const Terms& t) {
    const std::int64_t H = x.q.shape[0], n = x.q.shape[1], d = x.q.shape[2], m = x.k.shape[1];
    const double scale = t.scale > 0 ? t.scale : 1.0 / std::sqrt(double(d));
    Expected e;
    e.weights.assign(static_cast<std::size_t>(H * n * m), 0.0);
    e.output.assign(static_cast<std::size_t>(H * n * d), 0.0);
    for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t p = i + m - n;
            std::vector<double> s(static_cast<std::size_t>(m), -INFINITY);
            double top = -INFINITY;
            for (std::int64_t j = 0; j < m; ++j) {
                if (t.causal && j > p) continue;
                if (t.window > 0 && (p - j >= t.window || j - p >= t.window)) continue;
                double dot = 0;
                for (std::int64_t c = 0; c < d; ++c) dot += double(x.q.f32[(h * n + i) * d + c]) * double(x.k.f32[(h * m + j) * d + c]);
                double score = dot * scale;
                if (t.softcap > 0) score = t.softcap * std::tanh(score / t.softcap);
                if (!t.bias.empty()) score += t.bias[static_cast<std::size_t>(h * (n + m - 1) + (j - i + n - 1))];
                s[j] = score;
                top = std::max(top, score);
            }
            // a sink: one more logit in the softmax, with no value
            if (!t.sinks.empty()) top = std::max(top, double(t.sinks[static_cast<std::size_t>(h)]));
            double sum = t.sinks.empty() ? 0.0 : std::exp(double(t.sinks[static_cast<std::size_t>(h)]) - top);
            for (double v : s) sum += std::isinf(v) ? 0.0 : std::exp(v - top);
            for (std::int64_t j = 0; j < m; ++j) {
                const double w = std::isinf(s[j]) ? 0.0 : std::exp(s[j] - top) / sum;
                e.weights[static_cast<std::size_t>((h * n + i) * m + j)] = w;
                for (std::int64_t c = 0; c < d; ++c) e.output[static_cast<std::size_t>((h * n + i) * d + c)] += w * x.v.f32[(h * m + j) * d + c];
            }
        }
    return e;
}

RunRequest request(const Qkv3& x, const Terms& t) {
    RunRequest r = variantRequest(x, "model_softmax",
                                  {{"causal", t.causal}, {"window", t.window}, {"scale", t.scale}, {"softcap", t.softcap}});
    if (!t.bias.empty())
        r.variantInputs["relative_bias"] = PlainTensor::fromF32({x.q.shape[0], x.q.shape[1] + x.k.shape[1] - 1}, t.bias);
    if (!t.sinks.empty()) r.variantInputs["sinks"] = PlainTensor::fromF32({x.q.shape[0]}, t.sinks);
    return r;
}

std::vector<float> randomBias(std::int64_t heads, std::int64_t length, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> b(static_cast<std::size_t>(heads * length));
    for (auto& v : b) v = dist(gen);
    return b;
}

void expectMatches(const RunResult& run, const Qkv3& x, const Terms& t) {
    const Expected e = expected(x, t);
    const AttentionResult& r = run.results.at(0);
    const std::int64_t H = r.heads, n = r.n, m = r.m, d = r.d;
    for (std::int64_t h = 0; h < H; ++h) {
        const WeightTile tile = r.weights->tile(static_cast<int>(h), 0, n, 0, m, true);
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < m; ++j) {
                const double want = e.weights[static_cast<std::size_t>((h * n + i) * m + j)];
                ASSERT_NEAR(tile.at(i, j), want, 2e-6) << "h " << h << " i " << i << " j " << j;
                // a key outside the rule carries no reason; one inside carries exactly one
                const bool seen = !(t.causal && j > i + m - n) &&
                                  !(t.window > 0 && std::abs(j - (i + m - n)) >= t.window);
                EXPECT_EQ(tile.reasons[static_cast<std::size_t>((i)*m + j)] != 0, seen) << i << "," << j;
            }
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t c = 0; c < d; ++c)
                ASSERT_NEAR(r.output.data()[(h * n + i) * d + c], e.output[static_cast<std::size_t>((h * n + i) * d + c)], 2e-5);
    }
}

}  // namespace

TEST(ModelSoftmax, WithoutTermsItIsFull) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 37, 8, 11);
    for (bool causal : {false, true}) {
        RunRequest r = variantRequest(x, "model_softmax", {{"causal", causal}});
        r.variants.push_back(VariantRequest{"full", {{"causal", causal}}});
        const auto run = runOk(*engine, r);
        ASSERT_TRUE(run);
        const auto& own = run->results[0];
        const auto& full = run->results[1];
        for (int h = 0; h < 2; ++h) {
            const WeightTile a = own.weights->tile(h, 0, 37, 0, 37), b = full.weights->tile(h, 0, 37, 0, 37);
            for (std::size_t c = 0; c < a.weights.size(); ++c) ASSERT_FLOAT_EQ(a.weights[c], b.weights[c]);
        }
        Terms t;
        t.causal = causal;
        expectMatches(*run, x, t);
    }
}

TEST(ModelSoftmax, SlidingWindowKeepsTheLastWKeysItselfIncluded) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 300, 8, 12);  // several blocks of rows: the band moves along
    Terms t;
    t.causal = true;
    t.window = 7;
    const auto run = runOk(*engine, request(x, t));
    ASSERT_TRUE(run);
    expectMatches(*run, x, t);
    // By hand: row 10 sees keys 4 … 10, row 3 keys 0 … 3.
    const AttentionResult& r = run->results[0];
    EXPECT_EQ(r.weights->tile(0, 10, 11, 0, 300).at(10, 3), 0.0f);
    EXPECT_GT(r.weights->tile(0, 10, 11, 0, 300).at(10, 4), 0.0f);
    EXPECT_EQ(r.weights->entries(0), 7 * (300 - 6) + (1 + 2 + 3 + 4 + 5 + 6));
    EXPECT_FALSE(r.weights->denseRows());
    // Row visits list exactly the window.
    std::int64_t visited = 0;
    r.weights->forEachRow(1, 0, 300, [&](const RowEntries& row) {
        visited += row.count;
        double total = 0;
        for (std::int64_t c = 0; c < row.count; ++c) total += row.weights[c];
        EXPECT_NEAR(total, 1.0, 1e-5);
        return true;
    });
    EXPECT_EQ(visited, r.weights->entries(1));
}

TEST(ModelSoftmax, BidirectionalWindowSeesBothSides) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(1, 40, 4, 13);
    Terms t;
    t.window = 3;
    const auto run = runOk(*engine, request(x, t));
    ASSERT_TRUE(run);
    expectMatches(*run, x, t);
}

TEST(ModelSoftmax, RelativeBiasScaleAndSoftcap) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(3, 45, 8, 14);
    Terms t;
    t.scale = 1.0;  // T5: unscaled
    t.bias = randomBias(3, 2 * 45 - 1, 15);
    auto run = runOk(*engine, request(x, t));
    ASSERT_TRUE(run);
    expectMatches(*run, x, t);
    EXPECT_EQ(run->results[0].diagnostics.count("relative_bias"), 1u);

    Terms capped;
    capped.causal = true;
    capped.scale = 0.3;
    capped.softcap = 2.5;  // tight enough that tanh bends the scores
    run = runOk(*engine, request(x, capped));
    ASSERT_TRUE(run);
    expectMatches(*run, x, capped);
}

// GPT-OSS's sinks. By hand: two keys scoring 0 and a sink logit 0 share the row in thirds; a sink
// of ln 2 takes half (2 / (2 + 1 + 1)). Random rows: every weight and output against the
// definition, and each row's weights summing to 1 minus the written sink share.
TEST(ModelSoftmax, SinksTakeTheirShareOfEveryRow) {
    auto engine = makeEngine();
    Qkv3 flat = randomQkv(2, 2, 4, 30);
    std::fill(flat.q.f32.begin(), flat.q.f32.end(), 0.0f);  // every score 0
    Terms byHand;
    byHand.sinks = {0.0f, std::log(2.0f)};
    auto run = runOk(*engine, request(flat, byHand));
    ASSERT_TRUE(run);
    const AttentionResult& r = run->results[0];
    EXPECT_NEAR(r.weights->tile(0, 1, 2, 0, 2).at(1, 0), 1.0 / 3, 1e-6);
    EXPECT_NEAR(r.weights->tile(1, 1, 2, 0, 2).at(1, 1), 0.25, 1e-6);
    const PlainTensor& share = r.diagnostics.at("sink_share");
    ASSERT_EQ(share.shape, (std::vector<std::int64_t>{2, 2}));
    EXPECT_NEAR(share.f32[1], 1.0 / 3, 1e-6);
    EXPECT_NEAR(share.f32[3], 0.5, 1e-6);

    const Qkv3 x = randomQkv(3, 140, 8, 31);
    for (std::int64_t window : {std::int64_t{0}, std::int64_t{6}}) {
        Terms t;
        t.causal = true;
        t.window = window;
        t.sinks = {-1.0f, 0.5f, 3.0f};
        run = runOk(*engine, request(x, t));
        ASSERT_TRUE(run);
        expectMatches(*run, x, t);
        const AttentionResult& own = run->results[0];
        const PlainTensor& rows = own.diagnostics.at("sink_share");
        for (int h = 0; h < 3; ++h) {
            const WeightTile tile = own.weights->tile(h, 0, 140, 0, 140);
            for (std::int64_t i = 0; i < 140; ++i) {
                double total = 0;
                for (std::int64_t j = 0; j < 140; ++j) total += tile.at(i, j);
                ASSERT_NEAR(total, 1.0 - rows.f32[static_cast<std::size_t>(h * 140 + i)], 1e-5) << h << " " << i;
            }
        }
    }
}

TEST(ModelSoftmax, MoreKeysThanQueriesAlignsToTheLastKeys) {
    auto engine = makeEngine();
    Qkv3 x = randomQkv(2, 30, 8, 16);
    x.q = randomTensor(2, 12, 8, 17);
    Terms t;
    t.causal = true;
    t.window = 5;
    t.bias = randomBias(2, 12 + 30 - 1, 18);
    const auto run = runOk(*engine, request(x, t));
    ASSERT_TRUE(run);
    expectMatches(*run, x, t);
}

TEST(ModelSoftmax, ABiasOfTheWrongShapeIsRefused) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 10, 4, 19);
    RunRequest r = variantRequest(x, "model_softmax", {});
    r.variantInputs["relative_bias"] = PlainTensor::fromF32({2, 10}, std::vector<float>(20, 0.0f));
    auto result = engine->run(r);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("relative_bias"), std::string::npos) << result.error().message;
    EXPECT_NE(result.error().message.find("[2, 19]"), std::string::npos) << result.error().message;
}

TEST(ModelSoftmax, AResultFileGivesBackTheSameTiles) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 50, 8, 20);
    Terms t;
    t.causal = true;
    t.window = 9;
    t.scale = 0.5;
    t.bias = randomBias(2, 99, 21);
    t.sinks = {0.25f, -2.0f};
    const auto run = runOk(*engine, request(x, t));
    ASSERT_TRUE(run);
    const std::string path = (std::filesystem::temp_directory_path() / "attnscope_model_softmax.safetensors").string();
    ASSERT_TRUE(writeResultFile(path, *run, 0).ok());
    auto back = readResultFile(path);
    ASSERT_TRUE(back.ok()) << back.error().message;
    const AttentionResult& a = run->results[0];
    const AttentionResult& b = back.value()->results.at(0);
    for (int h = 0; h < 2; ++h) {
        const WeightTile ta = a.weights->tile(h, 0, 50, 0, 50), tb = b.weights->tile(h, 0, 50, 0, 50);
        for (std::size_t c = 0; c < ta.weights.size(); ++c) ASSERT_EQ(ta.weights[c], tb.weights[c]);
    }
    std::filesystem::remove(path);
}
