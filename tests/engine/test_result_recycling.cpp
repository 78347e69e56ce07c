// Result recycling (engine.cpp, BufferPool::take/give): the engine reuses the vectors of the result
// it returned last time (listed pattern, diagnostics, row status) only once no caller holds that
// result; a held result is never modified. Also: the dense-plan kernel on two threads gives the
// same results as on one, and BigBird's element-graph diagnostic exists only when weights are kept.

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

// Patterns large enough (> 64 KiB of column indices and of reasons) for the pool to keep them.
std::vector<RecycleCase> recycleCases() {
    return {
        {"longformer", {{"window", std::int64_t{40}}}, 2048},
        {"bigbird", {{"block", std::int64_t{16}}, {"random", std::int64_t{2}}}, 1024},
        {"sparse_strided", {{"stride", std::int64_t{64}}}, 2048},
        {"sparse_fixed", {{"block", std::int64_t{64}}, {"summary", std::int64_t{8}}}, 2048},
    };
}

TEST(ResultRecycling, PatternStorageReusedOnlyWhenReleased) {
    auto engine = makeEngine();
    for (const auto& c : recycleCases()) {
        SCOPED_TRACE(c.id);
        const Qkv3 x = randomQkv(2, c.n, 8, 21);
        RunRequest request = variantRequest(x, c.id, c.params);
        request.keepWeights = false;
        const std::int32_t* firstCols = nullptr;
        const std::uint8_t* firstReasons = nullptr;
        std::vector<std::int32_t> cols;
        std::vector<std::uint8_t> reasons;
        std::vector<std::int64_t> rowPtr;
        std::vector<float> output;
        {
            const auto a = runOk(*engine, request);
            ASSERT_TRUE(a);
            const SparsePattern& p = a->results[0].pattern;
            ASSERT_GT(p.colIdx.size() * sizeof(std::int32_t), 64u * 1024u);
            ASSERT_GT(p.reason.size(), 64u * 1024u);
            firstCols = p.colIdx.data();
            firstReasons = p.reason.data();
            cols = p.colIdx;
            reasons = p.reason;
            rowPtr = p.rowPtr;
            output.assign(a->results[0].output.data(), a->results[0].output.data() + a->results[0].output.numel());
        }
        // `a` was released: its storage is reused, its contents rebuilt identically.
        const auto b = runOk(*engine, request);
        ASSERT_TRUE(b);
        const AttentionResult& rb = b->results[0];
        EXPECT_EQ(rb.pattern.colIdx.data(), firstCols) << "released pattern storage should be reused";
        EXPECT_EQ(rb.pattern.reason.data(), firstReasons) << "released pattern storage should be reused";
        EXPECT_EQ(rb.pattern.colIdx, cols);
        EXPECT_EQ(rb.pattern.reason, reasons);
        EXPECT_EQ(rb.pattern.rowPtr, rowPtr);
        ASSERT_EQ(rb.output.numel(), static_cast<std::int64_t>(output.size()));
        for (std::size_t e = 0; e < output.size(); ++e) ASSERT_EQ(rb.output[e], output[e]) << "element " << e;

        // `b` is held: the next run must not touch it.
        const auto heldCols = rb.pattern.colIdx.data();
        const auto c2 = runOk(*engine, request);
        ASSERT_TRUE(c2);
        const AttentionResult& rc = c2->results[0];
        EXPECT_NE(rc.pattern.colIdx.data(), heldCols) << "held result must not be overwritten";
        EXPECT_NE(rc.pattern.reason.data(), rb.pattern.reason.data());
        EXPECT_EQ(rb.pattern.colIdx, cols) << "held result changed";
        EXPECT_EQ(rb.pattern.reason, reasons) << "held result changed";
        EXPECT_EQ(rc.pattern.colIdx, cols);
        for (std::size_t e = 0; e < output.size(); ++e) {
            ASSERT_EQ(rb.output[e], output[e]) << "held output changed at " << e;
            ASSERT_EQ(rc.output[e], output[e]) << "element " << e;
        }
    }
}

TEST(ResultRecycling, ACopiedResultKeepsItsPattern) {
    // A caller that copies the AttentionResult out and drops the RunResult owns its copy.
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 2048, 8, 22);
    RunRequest request = variantRequest(x, "longformer", {{"window", std::int64_t{40}}});
    request.keepWeights = false;
    AttentionResult copy;
    {
        const auto a = runOk(*engine, request);
        ASSERT_TRUE(a);
        copy = a->results[0];
    }
    const std::vector<std::int32_t> cols = copy.pattern.colIdx;
    RunRequest other = variantRequest(x, "longformer", {{"window", std::int64_t{41}}});
    other.keepWeights = false;
    const auto b = runOk(*engine, other);
    ASSERT_TRUE(b);
    EXPECT_EQ(copy.pattern.colIdx, cols);
    EXPECT_NE(b->results[0].pattern.colIdx, cols);
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
        request.keepWeights = false;
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
        // and the general kernel (weights kept) agrees with the two-thread fast path
        RunRequest general = request;
        general.keepWeights = true;
        const auto g = runOk(**engine2, general);
        ASSERT_TRUE(g);
        ASSERT_EQ(g->results[0].weightsLayout, WeightsLayout::AlignedWithPattern);
        expectMatchesMaskedSoftmax(g->results[0], x.q, x.k, x.v);
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
        request.keepWeights = false;
        const auto reference = runOk(**engine, request);
        ASSERT_TRUE(reference);
        int attentionCalls = 0;
        auto cancelled = (*engine)->run(request, [&](const Progress& p) {
            if (std::string(p.stage) != "attention") return true;
            return ++attentionCalls < 2;
        });
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

TEST(ResultRecycling, BigBirdElementGraphOnlyWithKeptWeights) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 64, 4, 24);
    RunRequest request = variantRequest(x, "bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{2}}});
    const auto kept = runOk(*engine, request);
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->results[0].diagnostics.count("element_row_ptr"), 1u);
    EXPECT_EQ(kept->results[0].diagnostics.count("element_col_idx"), 1u);
    EXPECT_EQ(kept->results[0].diagnostics.count("element_reason"), 1u);
    request.keepWeights = false;
    const auto notKept = runOk(*engine, request);
    ASSERT_TRUE(notKept);
    EXPECT_EQ(notKept->results[0].diagnostics.count("element_row_ptr"), 0u);
    EXPECT_EQ(notKept->results[0].diagnostics.count("rand_attn"), 1u);
    // the computed pattern and the output do not depend on it
    EXPECT_EQ(notKept->results[0].pattern.colIdx, kept->results[0].pattern.colIdx);
    EXPECT_EQ(notKept->results[0].pattern.reason, kept->results[0].pattern.reason);
}

// BigBird's random-block draws (a diagnostic the engine recycles, > 64 KiB here) are written into
// the released result's storage on the next run: steady-state runs then map no fresh pages.
TEST(ResultRecycling, BigBirdDrawsReuseReleasedStorage) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(8, 2048, 8, 25);
    RunRequest request = variantRequest(x, "bigbird", {{"block", std::int64_t{16}}, {"random", std::int64_t{10}}});
    request.keepWeights = false;
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
