// Result recycling (engine.cpp, BufferPool::take/give): the engine reuses the vectors of the result
// it returned last time (row statistics, diagnostics, row status) only once no caller holds that
// result; a held result is never modified. Also: the pattern kernel on two threads gives the same
// results as on one, and BigBird's element graph derives from the draws.

#include "sparse_test_support.h"

#include <algorithm>
#include <cmath>

namespace {

using namespace sparse_test;

struct RecycleCase {
    std::string id;
    ParamValues params;
    std::int64_t n;
};

// Row statistics large enough (> 64 KiB: 2 heads x 16384 rows of lse) for the pool to keep them.
std::vector<RecycleCase> recycleCases() {
    return {
        {"longformer", {{"window", std::int64_t{8}}}, 16384},
        {"bigbird", {{"block", std::int64_t{16}}, {"random", std::int64_t{2}}}, 16384},
        {"sparse_strided", {{"stride", std::int64_t{128}}}, 16384},
        {"sparse_fixed", {{"block", std::int64_t{64}}, {"summary", std::int64_t{8}}}, 16384},
    };
}

TEST(ResultRecycling, StatisticsStorageReusedOnlyWhenReleased) {
    auto engine = makeEngine();
    for (const auto& c : recycleCases()) {
        SCOPED_TRACE(c.id);
        const Qkv3 x = randomQkv(2, c.n, 8, 21);
        RunRequest request = variantRequest(x, c.id, c.params);
        const float* firstLse = nullptr;
        std::vector<float> lse, output, someWeights;
        const auto weightsSample = [](const AttentionResult& r) {
            return r.weights->tile(1, 1000, 1010, 990, 1030).weights;
        };
        {
            const auto a = runOk(*engine, request);
            ASSERT_TRUE(a);
            const PlainTensor& t = a->results[0].stats.at("row_sum");
            ASSERT_GT(t.f32.size() * sizeof(float), 64u * 1024u);
            firstLse = t.f32.data();
            lse = t.f32;
            output.assign(a->results[0].output.data(), a->results[0].output.data() + a->results[0].output.numel());
            someWeights = weightsSample(a->results[0]);
        }
        // `a` was released: its storage is reused, its contents rebuilt identically.
        const auto b = runOk(*engine, request);
        ASSERT_TRUE(b);
        const AttentionResult& rb = b->results[0];
        EXPECT_EQ(rb.stats.at("row_sum").f32.data(), firstLse) << "released statistics storage should be reused";
        EXPECT_EQ(rb.stats.at("row_sum").f32, lse);
        ASSERT_EQ(rb.output.numel(), static_cast<std::int64_t>(output.size()));
        for (std::size_t e = 0; e < output.size(); ++e) ASSERT_EQ(rb.output[e], output[e]) << "element " << e;
        EXPECT_EQ(weightsSample(rb), someWeights);

        // `b` is held: the next run must not touch it.
        const auto c2 = runOk(*engine, request);
        ASSERT_TRUE(c2);
        const AttentionResult& rc = c2->results[0];
        EXPECT_NE(rc.stats.at("row_sum").f32.data(), rb.stats.at("row_sum").f32.data()) << "held result must not be overwritten";
        EXPECT_EQ(rb.stats.at("row_sum").f32, lse) << "held result changed";
        EXPECT_EQ(weightsSample(rb), someWeights) << "held result changed";
        for (std::size_t e = 0; e < output.size(); ++e) {
            ASSERT_EQ(rb.output[e], output[e]) << "held output changed at " << e;
            ASSERT_EQ(rc.output[e], output[e]) << "element " << e;
        }
    }
}

TEST(ResultRecycling, ACopiedResultKeepsItsWeights) {
    // A caller that copies the AttentionResult out and drops the RunResult owns its copy: its
    // weights share the run's Q and K and its own statistics.
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 2048, 8, 22);
    RunRequest request = variantRequest(x, "longformer", {{"window", std::int64_t{40}}});
    AttentionResult copy;
    {
        const auto a = runOk(*engine, request);
        ASSERT_TRUE(a);
        copy = a->results[0];
    }
    const std::vector<float> weights = copy.weights->tile(0, 500, 520, 470, 560).weights;
    RunRequest other = variantRequest(x, "longformer", {{"window", std::int64_t{41}}});
    const auto b = runOk(*engine, other);
    ASSERT_TRUE(b);
    EXPECT_EQ(copy.weights->tile(0, 500, 520, 470, 560).weights, weights);
    EXPECT_NE(b->results[0].weights->tile(0, 500, 520, 470, 560).weights, weights);
}

TEST(ResultRecycling, DensePlanOnTwoThreadsMatchesOneThread) {
    const std::vector<RecycleCase> cases = {
        {"longformer", {{"window", std::int64_t{7}}}, 300},
        {"longformer", {{"window", std::int64_t{5}}, {"causal", true}, {"dilation", std::vector<std::int64_t>{1, 2, 3}}}, 257},
        {"bigbird", {{"block", std::int64_t{8}}, {"random", std::int64_t{3}}}, 320},
        {"bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{1}}, {"form", std::string("etc")},
                     {"extra_global", std::int64_t{3}}},
         67},
        {"sparse_strided", {{"stride", std::int64_t{16}}}, 500},
        {"sparse_strided", {{"stride", std::int64_t{5}}, {"combine", std::string("interleave")}}, 101},
        {"sparse_fixed", {{"block", std::int64_t{32}}, {"summary", std::int64_t{4}}}, 400},
        {"sparse_fixed", {{"block", std::int64_t{8}}, {"summary", std::int64_t{3}}, {"causal", false}}, 90},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.id + " n=" + std::to_string(c.n));
        const Qkv3 x = randomQkv(3, c.n, 16, 23);
        RunRequest request = variantRequest(x, c.id, c.params);
        std::vector<float> one;
        std::int64_t emptyOne = 0;
        {
            auto engine = makeEngine();  // 1 intra-op thread
            const auto r = runOk(*engine, request);
            ASSERT_TRUE(r);
            one.assign(r->results[0].output.data(), r->results[0].output.data() + r->results[0].output.numel());
            emptyOne = r->results[0].emptyRowCount;
        }
        EngineOptions options;
        options.threads = 2;
        auto engine2 = Engine::create(options);
        ASSERT_TRUE(engine2.ok());
        const auto r2 = runOk(**engine2, request);
        ASSERT_TRUE(r2);
        EXPECT_EQ(r2->results[0].emptyRowCount, emptyOne);
        ASSERT_EQ(r2->results[0].output.numel(), static_cast<std::int64_t>(one.size()));
        double worst = 0;
        for (std::size_t e = 0; e < one.size(); ++e)
            worst = std::max(worst, std::abs(static_cast<double>(r2->results[0].output[e]) - one[e]));
        EXPECT_LT(worst, 1e-6);
        // and the two-thread run against the reference
        expectMatchesMaskedSoftmax(r2->results[0], x.q, x.k, x.v);
    }
    makeEngine();  // back to one intra-op thread for the tests that follow
}

TEST(ResultRecycling, DensePlanCancelsOnTwoThreadsAndStaysUsable) {
    // Progress is reported (and cancellation honoured) from the calling thread while the groups
    // run on two threads; the engine must come back usable and give the same result afterwards.
    EngineOptions options;
    options.threads = 2;
    auto engine = Engine::create(options);
    ASSERT_TRUE(engine.ok());
    const Qkv3 x = randomQkv(4, 1024, 16, 25);
    for (const std::string id : {"longformer", "bigbird", "sparse_strided", "sparse_fixed"}) {
        SCOPED_TRACE(id);
        ParamValues params;
        if (id == "longformer") params = {{"window", std::int64_t{32}}};
        if (id == "bigbird") params = {{"block", std::int64_t{16}}, {"random", std::int64_t{2}}};
        if (id == "sparse_strided") params = {{"stride", std::int64_t{32}}};
        if (id == "sparse_fixed") params = {{"block", std::int64_t{32}}, {"summary", std::int64_t{4}}};
        RunRequest request = variantRequest(x, id, params);
        const auto reference = runOk(**engine, request);
        ASSERT_TRUE(reference);
        // Cancelled at the first attention report: on a busy machine the other thread may take
        // every group before the calling thread reports twice, but one report always comes.
        auto cancelled = (*engine)->run(request, [&](const Progress& p) { return std::string(p.stage) != "attention"; });
        ASSERT_FALSE(cancelled.ok());
        EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
        const auto again = runOk(**engine, request);
        ASSERT_TRUE(again);
        const auto& a = reference->results[0].output;
        const auto& b = again->results[0].output;
        ASSERT_EQ(a.numel(), b.numel());
        for (std::int64_t e = 0; e < a.numel(); ++e)
            ASSERT_EQ(a[static_cast<std::size_t>(e)], b[static_cast<std::size_t>(e)]) << "element " << e;
    }
    makeEngine();  // back to one intra-op thread for the tests that follow
}

// The element graph is no diagnostic any more: it derives from the draws on demand.
TEST(ResultRecycling, BigBirdElementGraphDerivesFromTheDraws) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 64, 4, 24);
    RunRequest request = variantRequest(x, "bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{2}}});
    const auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->results[0].diagnostics.count("element_row_ptr"), 0u);
    EXPECT_EQ(r->results[0].diagnostics.count("rand_attn"), 1u);
    ASSERT_EQ(r->results[0].extraPatterns.count("element_graph"), 1u);
    const auto& graph = *r->results[0].extraPatterns.at("element_graph");
    EXPECT_EQ(graph.queries(), 64);
    EXPECT_EQ(graph.weightAt(0, 10, 10), 0.0f) << "reasons only";
}

// BigBird's random-block draws (a diagnostic the engine recycles, > 64 KiB here) are written into
// the released result's storage on the next run: steady-state runs then map no fresh pages.
TEST(ResultRecycling, BigBirdDrawsReuseReleasedStorage) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(8, 2048, 8, 25);
    RunRequest request = variantRequest(x, "bigbird", {{"block", std::int64_t{16}}, {"random", std::int64_t{10}}});
    const std::int64_t* firstDraws = nullptr;
    std::vector<std::int64_t> draws;
    {
        const auto a = runOk(*engine, request);
        ASSERT_TRUE(a);
        const PlainTensor& t = a->results[0].diagnostics.at("rand_attn");
        ASSERT_GT(t.i64.size() * sizeof(std::int64_t), 64u * 1024u);
        firstDraws = t.i64.data();
        draws = t.i64;
    }
    const auto b = runOk(*engine, request);
    ASSERT_TRUE(b);
    const PlainTensor& t = b->results[0].diagnostics.at("rand_attn");
    EXPECT_EQ(t.i64.data(), firstDraws) << "released diagnostic storage should be reused";
    EXPECT_EQ(t.i64, draws);
    // held: the next run writes elsewhere and leaves it as it was
    const auto c = runOk(*engine, request);
    ASSERT_TRUE(c);
    EXPECT_NE(c->results[0].diagnostics.at("rand_attn").i64.data(), t.i64.data());
    EXPECT_EQ(t.i64, draws);
}

}  // namespace
