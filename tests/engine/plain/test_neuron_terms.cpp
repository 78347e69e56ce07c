// The neuron view's data (attnscope/neuron_terms.h) on real runs: each key's products sum to its
// dot, the dot times the scale plus the variant's terms is its score, and the weights — the
// result's own, the heatmap's — are the softmax of the scores over the allowed keys; a hand-worked
// case, Transformer-XL's four terms, Star-Transformer's relay key, and refusals.

#include <attnscope/neuron_terms.h>
#include <attnscope/torch_free_run.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace attnscope::engine;

namespace {

std::shared_ptr<const RunResult> runOn(std::int64_t heads, std::int64_t n, std::int64_t d, const std::vector<float>& q,
                                       const std::vector<float>& k, const std::string& variant, ParamValues params = {}) {
    RunRequest request;
    QkvTensors t;
    t.q = PlainTensor::fromF32({heads, n, d}, q);
    t.k = PlainTensor::fromF32({heads, n, d}, k);
    t.v = PlainTensor::fromF32({heads, n, d}, k);
    request.source = t;
    request.variants.push_back(VariantRequest{variant, params});
    auto run = runTorchFree(request, TorchFreeRunOptions{});
    EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.error().message);
    return run.ok() ? run.value() : nullptr;
}

std::vector<float> normal(std::int64_t count, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> draw;
    std::vector<float> x(static_cast<std::size_t>(count));
    for (float& v : x) v = draw(rng);
    return x;
}

// Products sum to the dot, the weights are the result's, and a softmax of the scores over the
// allowed keys gives them.
void expectConsistent(const RunResult& run, const NeuronTerms& t) {
    double high = -INFINITY, sum = 0;
    for (const NeuronKey& key : t.keys) {
        double dot = 0;
        for (float p : key.product) dot += p;
        EXPECT_NEAR(dot, key.dot, 1e-5 * (1 + std::abs(key.dot)));
        EXPECT_NEAR(key.scaled, key.dot * t.scale, 1e-12);
        EXPECT_EQ(key.weight, run.results[0].weightAt(t.head, t.query, key.index));
        if (key.allowed) high = std::max(high, key.score);
    }
    for (const NeuronKey& key : t.keys)
        if (key.allowed) sum += std::exp(key.score - high);
    for (const NeuronKey& key : t.keys)
        EXPECT_NEAR(key.weight, key.allowed ? std::exp(key.score - high) / sum : 0.0, 2e-6) << "key " << key.index;
}

}  // namespace

// q = (1, 2), keys (3, 0) and (0, 1), d = 2: products (3, 0) and (0, 2), dots 3 and 2, scaled by
// 1/√2 to 2.121320 and 1.414214; weights 1 / (1 + e^−0.707107) = 0.669761 and 0.330239.
TEST(NeuronTerms, AHandWorkedRow) {
    auto run = runOn(1, 2, 2, {1, 2, 0, 0}, {3, 0, 0, 1}, "full");
    ASSERT_TRUE(run);
    auto t = neuronTerms(*run, 0, 0, 0, 0, 2);
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->queryVector, (std::vector<float>{1, 2}));
    ASSERT_EQ(t->keys.size(), 2u);
    EXPECT_EQ(t->keys[0].product, (std::vector<float>{3, 0}));
    EXPECT_EQ(t->keys[1].product, (std::vector<float>{0, 2}));
    EXPECT_DOUBLE_EQ(t->keys[0].dot, 3.0);
    EXPECT_NEAR(t->keys[0].scaled, 2.121320, 1e-6);
    EXPECT_NEAR(t->keys[1].score, 1.414214, 1e-6);
    EXPECT_NEAR(t->keys[0].weight, 0.669761, 1e-6);
    EXPECT_NEAR(t->keys[1].weight, 0.330239, 1e-6);
    EXPECT_TRUE(t->keys[0].allowed && t->keys[1].allowed);
}

TEST(NeuronTerms, EveryRowOfCausalAndPatternVariantsAddsUp) {
    const std::int64_t heads = 2, n = 24, d = 8;
    const auto q = normal(heads * n * d, 1), k = normal(heads * n * d, 2);
    for (const auto& [variant, params] : std::vector<std::pair<std::string, ParamValues>>{
             {"full", {{"causal", true}}}, {"longformer", {{"window", std::int64_t{3}}}}, {"topk", {{"k", std::int64_t{5}}}}}) {
        auto run = runOn(heads, n, d, q, k, variant, params);
        ASSERT_TRUE(run);
        for (const std::int64_t i : {std::int64_t{0}, std::int64_t{11}, n - 1}) {
            auto t = neuronTerms(*run, 0, 1, i, 0, n);
            ASSERT_TRUE(t.ok()) << variant << ": " << t.error().message;
            SCOPED_TRACE(variant + " query " + std::to_string(i));
            expectConsistent(*run, *t);
        }
    }
}

// Transformer-XL: its score is the scaled content term plus the position and global terms.
TEST(NeuronTerms, TransformerXlsFourTermsMakeItsWeights) {
    const std::int64_t heads = 2, n = 16, d = 8;
    auto run = runOn(heads, n, d, normal(heads * n * d, 3), normal(heads * n * d, 4), "transformer_xl",
                     {{"segment", std::int64_t{4}}, {"memory", std::int64_t{4}}});
    ASSERT_TRUE(run);
    auto t = neuronTerms(*run, 0, 0, 9, 0, n);
    ASSERT_TRUE(t.ok()) << t.error().message;
    int withTerms = 0;
    for (const NeuronKey& key : t->keys) withTerms += key.terms.size() == 3 ? 1 : 0;
    EXPECT_GT(withTerms, 0);
    expectConsistent(*run, *t);
}

// Star-Transformer: the relay (key n) is the mean of the keys, and weighs in like any key.
TEST(NeuronTerms, StarsRelayKeyIsTheMeanOfTheKeys) {
    const std::int64_t heads = 1, n = 6, d = 4;
    const auto k = normal(heads * n * d, 6);
    auto run = runOn(heads, n, d, normal(heads * n * d, 5), k, "star");
    ASSERT_TRUE(run);
    auto t = neuronTerms(*run, 0, 0, 2, 0, n + 1);
    ASSERT_TRUE(t.ok()) << t.error().message;
    for (std::int64_t c = 0; c < d; ++c) {
        double mean = 0;
        for (std::int64_t j = 0; j < n; ++j) mean += k[static_cast<std::size_t>(j * d + c)] / static_cast<double>(n);
        EXPECT_NEAR(t->keys.back().key[static_cast<std::size_t>(c)], mean, 1e-6);
    }
    expectConsistent(*run, *t);
}

TEST(NeuronTerms, RefusalsNameTheProblem) {
    auto run = runOn(1, 4, 2, normal(8, 7), normal(8, 8), "full");
    ASSERT_TRUE(run);
    EXPECT_NE(neuronTerms(*run, 1, 0, 0, 0, 4).error().message.find("result 1"), std::string::npos);
    EXPECT_NE(neuronTerms(*run, 0, 1, 0, 0, 4).error().message.find("head 1"), std::string::npos);
    EXPECT_NE(neuronTerms(*run, 0, 0, 4, 0, 4).error().message.find("query 4"), std::string::npos);
    EXPECT_NE(neuronTerms(*run, 0, 0, 0, 2, 9).error().message.find("keys 2:9"), std::string::npos);
}
