// Engine requests: projections, determinism, errors, memory budget, cancellation.

#include <attnscope/engine.h>

#include <gtest/gtest.h>

#include "../support/weights_support.h"
#include "base/runtime/seeded_normal.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace attnscope::engine;

namespace {

std::unique_ptr<Engine> makeEngine() {
    EngineOptions options;
    options.threads = 1;
    auto engine = Engine::create(options);
    EXPECT_TRUE(engine.ok());
    return std::move(engine.value());
}

RunRequest textRequest(const std::string& text, std::uint64_t seed) {
    RunRequest request;
    request.source = InputSpec{text, TokenizerKind::Words, std::nullopt};
    request.projection.heads = 3;
    request.projection.headDim = 8;
    request.projection.seed = seed;
    request.variants.push_back(VariantRequest{"full", {}});
    return request;
}

}  // namespace

TEST(EngineRequests, RandomProjectionsAreBitIdenticalForASeed) {
    auto engine = makeEngine();
    const std::string text = "the cat sat on the mat and the cat slept";
    auto a = engine->run(textRequest(text, 42));
    auto b = engine->run(textRequest(text, 42));
    auto c = engine->run(textRequest(text, 43));
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    const auto& ra = (*a)->results[0];
    const auto& rb = (*b)->results[0];
    ASSERT_EQ(ra.n, 10);
    EXPECT_EQ(ra.heads, 3);
    EXPECT_EQ(ra.d, 8);
    ASSERT_EQ(ra.output.numel(), rb.output.numel());
    EXPECT_EQ(0, std::memcmp(ra.output.data(), rb.output.data(), ra.output.numel() * sizeof(float)));
    EXPECT_EQ(test_support::denseWeights(ra), test_support::denseWeights(rb));
    EXPECT_NE(0, std::memcmp(ra.output.data(), (*c)->results[0].output.data(), ra.output.numel() * sizeof(float)));
    EXPECT_EQ((*a)->input.tokens.size(), 10u);
}

// q and k of a long text (4,500 tokens: the projection goes 2,048 rows at a time) equal x · W
// recomputed here in float64 from the definitions: x[t] = sinusoid(t) + N(0, 1) draws from (seed,
// token id), W[mat][h] entries N(0, 1/D) drawn from (seed, weight stream + mat · heads + h).
TEST(EngineRequests, RandomProjectionsOfALongTextAreXTimesW) {
    auto engine = makeEngine();
    std::string text;
    for (int i = 0; i < 4500; ++i) text += "w" + std::to_string(i % 37) + " ";
    RunRequest request = textRequest(text, 5);
    request.variants = {VariantRequest{"linear", {}}};
    auto run = engine->run(request);
    ASSERT_TRUE(run.ok()) << run.error().message;
    const RunResult& r = **run;
    const std::int64_t n = r.n, heads = 3, hd = 8, dim = heads * hd;
    ASSERT_EQ(n, 4500);
    std::vector<double> w(static_cast<std::size_t>(3 * heads * dim * hd));
    for (std::int64_t mat = 0; mat < 3 * heads; ++mat) {
        SeededNormal gen(mixSeed(5, 0x200000000ull + static_cast<std::uint64_t>(mat)));
        for (std::int64_t e = 0; e < dim * hd; ++e)
            w[static_cast<std::size_t>(mat * dim * hd + e)] = static_cast<float>(gen.normal() / std::sqrt(double(dim)));
    }
    double worst = 0;
    std::vector<double> x(static_cast<std::size_t>(dim));
    for (std::int64_t t = 0; t < n; ++t) {
        SeededNormal gen(mixSeed(5, kEmbeddingStream ^ static_cast<std::uint64_t>(r.input.tokens[static_cast<std::size_t>(t)].id)));
        for (std::int64_t i = 0; i < dim; ++i) {
            const double angle = double(t) / std::pow(10000.0, double(i - i % 2) / double(dim));
            x[static_cast<std::size_t>(i)] = double(static_cast<float>(i % 2 == 0 ? std::sin(angle) : std::cos(angle))) +
                                              double(static_cast<float>(gen.normal()));
        }
        for (std::int64_t mat = 0; mat < 2; ++mat)
            for (std::int64_t h = 0; h < heads; ++h)
                for (std::int64_t c = 0; c < hd; ++c) {
                    double expected = 0;
                    for (std::int64_t i = 0; i < dim; ++i)
                        expected += x[static_cast<std::size_t>(i)] * w[static_cast<std::size_t>(((mat * heads + h) * dim + i) * hd + c)];
                    const float got = (mat == 0 ? r.q : r.k).data.get()[(h * n + t) * hd + c];
                    worst = std::max(worst, std::abs(double(got) - expected));
                }
    }
    EXPECT_LT(worst, 2e-5);
}

// The projection of a long input asks `progress` between blocks of rows, so a cancel there ends
// the run before any attention.
TEST(EngineRequests, TheProjectionOfALongInputCanBeCancelled) {
    auto engine = makeEngine();
    std::string text;
    for (int i = 0; i < 5000; ++i) text += "t" + std::to_string(i % 97) + " ";
    std::vector<std::int64_t> projected;
    bool attentionStarted = false;
    auto result = engine->run(textRequest(text, 0), [&](const Progress& p) {
        if (std::string(p.stage) == "attention") attentionStarted = true;
        if (std::string(p.stage) != "qkv") return true;
        projected.push_back(p.done);
        return p.done < 2048;
    });
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::Cancelled);
    EXPECT_FALSE(attentionStarted);
    EXPECT_EQ(projected, (std::vector<std::int64_t>{0, 0, 2048}));  // the engine's "qkv" start, then per block
}

TEST(EngineRequests, EqualTokensAtEqualPositionsGetEqualAttentionRows) {
    // The embedding depends only on (seed, token): "the" at 0 and "the" at 4 differ only by position,
    // so their weights differ; but every head's rows sum to 1 and the request echoes the seed.
    auto engine = makeEngine();
    auto r = engine->run(textRequest("a b a b", 7));
    ASSERT_TRUE(r.ok());
    EXPECT_NE((*r)->requestJson.find("\"seed\":7"), std::string::npos);
    const auto& res = (*r)->results[0];
    for (int h = 0; h < 3; ++h)
        for (int i = 0; i < 4; ++i) {
            double sum = 0;
            for (int j = 0; j < 4; ++j) sum += res.weightAt(h, i, j);
            EXPECT_NEAR(sum, 1.0, 1e-6);
        }
}

TEST(EngineRequests, ClearErrors) {
    auto engine = makeEngine();
    auto request = textRequest("hello world", 0);
    request.variants[0].id = "nope";
    auto unknown = engine->run(request);
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().code, ErrorCode::NotFound);
    EXPECT_NE(unknown.error().message.find("unknown variant 'nope'"), std::string::npos);
    EXPECT_NE(unknown.error().message.find("full"), std::string::npos);

    request = textRequest("hello world", 0);
    request.variants[0].params["window"] = std::int64_t{3};
    auto badParam = engine->run(request);
    ASSERT_FALSE(badParam.ok());
    EXPECT_EQ(badParam.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(badParam.error().message.find("'window'"), std::string::npos);

    request = textRequest("ok \xC3\x28 bad", 0);
    auto invalid = engine->run(request);
    ASSERT_FALSE(invalid.ok());
    EXPECT_EQ(invalid.error().code, ErrorCode::InvalidInput);
    EXPECT_NE(invalid.error().message.find("offset 3"), std::string::npos) << invalid.error().message;

    auto empty = engine->run(textRequest("   ", 0));
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().code, ErrorCode::InvalidInput);

    RunRequest nan;
    nan.source = QkvTensors{PlainTensor::fromF32({1, 2, 1}, {1.0f, NAN}), PlainTensor::fromF32({1, 2, 1}, {1.0f, 2.0f}),
                         PlainTensor::fromF32({1, 2, 1}, {1.0f, 2.0f})};
    nan.variants.push_back(VariantRequest{"full", {}});
    auto nanResult = engine->run(nan);
    ASSERT_FALSE(nanResult.ok());
    EXPECT_NE(nanResult.error().message.find("non-finite"), std::string::npos);

    RunRequest shapes = nan;
    std::get<QkvTensors>(shapes.source).q = PlainTensor::fromF32({1, 2, 2}, {1, 2, 3, 4});
    auto shapeResult = engine->run(shapes);
    ASSERT_FALSE(shapeResult.ok());
    EXPECT_NE(shapeResult.error().message.find("head dimension"), std::string::npos);
}

TEST(EngineRequests, RequestOverBudgetIsRefusedBeforeAllocating) {
    auto engine = makeEngine();
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "w" + std::to_string(i % 50) + " ";
    auto request = textRequest(text, 0);
    // Everything the run allocates: the projections' Q, K, V (3 x 3 heads x 2000 x 8 floats =
    // 576000 bytes), the output, row statistics and status (3 x 2000 x (32 + 9) = 246000 bytes) and
    // one worker's flash-attention scratch (base/kernels/flash_attention.h: the keys packed in panels of
    // 32, 2016 x 8 floats; the values padded to 16 columns, 2000 x 16; a block of 128 rows of 256
    // scores, 16 outputs and a max, 128 x 273; as floats 83072 x 4 bytes, and 128 double sums:
    // 333312 bytes): 1155312 bytes.
    request.memoryBudgetBytes = 1 << 20;
    auto result = engine->run(request);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::OutOfBudget);
    const std::string& msg = result.error().message;
    EXPECT_NE(msg.find("1155312 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("sparse variant"), std::string::npos) << msg;

    // Weights are recomputed on demand: no n x n matrix is kept, and 3 MiB is enough.
    request.memoryBudgetBytes = 3 << 20;
    auto ok = engine->run(request);
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    EXPECT_LT((*ok)->results[0].counters.peakBytes, 4u << 20);
}

TEST(EngineRequests, ProgressCanCancel) {
    auto engine = makeEngine();
    std::string text;
    for (int i = 0; i < 1500; ++i) text += "t" + std::to_string(i % 97) + " ";
    int calls = 0;
    auto result = engine->run(textRequest(text, 0), [&](const Progress& p) {
        ++calls;
        return std::string(p.stage) != "attention" || p.done < 2;
    });
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::Cancelled);
    EXPECT_GT(calls, 1);
    // The engine stays usable after a cancel.
    EXPECT_TRUE(engine->run(textRequest("still works", 0)).ok());
}

TEST(EngineRequests, CountersAreFilled) {
    auto engine = makeEngine();
    auto r = engine->run(textRequest("one two three four five", 0));
    ASSERT_TRUE(r.ok());
    const auto& c = (*r)->results[0].counters;
    EXPECT_EQ(c.entriesComputed, 3 * 25);
    EXPECT_DOUBLE_EQ(c.flops, 4.0 * 3 * 25 * 8);
    EXPECT_GT(c.peakBytes, 0u);
    ASSERT_FALSE(c.stages.empty());
    EXPECT_EQ(c.stages[0].stage, "attention");
}

// A run estimated to take long says so before its work starts (the CLI prints it); a short one
// says nothing. Here `full` on a million characters (10^12 scores per head) is cancelled at the
// first stage after the announcement, so nothing large is ever allocated.
TEST(EngineRequests, ALongRunIsAnnouncedBeforeItStarts) {
    std::vector<std::string> warnings;
    EngineOptions options;
    options.threads = 1;
    options.log = [&](LogLevel level, const std::string& message) {
        if (level == LogLevel::Warning) warnings.push_back(message);
    };
    auto engine = Engine::create(options);
    ASSERT_TRUE(engine.ok());
    RunRequest request = textRequest(std::string(1'000'000, 'a'), 1);
    std::get<InputSpec>(request.source).tokenizer = TokenizerKind::Chars;
    auto stopBeforeQkv = [](const Progress& p) { return std::strcmp(p.stage, "tokenize") == 0; };
    auto cancelled = engine.value()->run(request, stopBeforeQkv);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
    ASSERT_EQ(warnings.size(), 1u);
    // 4 · 3 heads · 10^6 · 8 · 10^6 flops at 6 · 10^10 a second on one thread: 1,600 s
    EXPECT_NE(warnings[0].find("this run of 1000000 tokens is estimated to take about 27 min on 1 thread"), std::string::npos)
        << warnings[0];

    warnings.clear();
    ASSERT_TRUE(engine.value()->run(textRequest("a short text", 1)).ok());
    EXPECT_TRUE(warnings.empty());
    // a sparse variant on the same million tokens is not announced: Longformer's window of 4
    // scores about 9 keys a query
    RunRequest sparse = request;
    sparse.variants = {VariantRequest{"longformer", {{"window", std::int64_t{4}}}}};
    (void)engine.value()->run(sparse, stopBeforeQkv);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
}
