// `sparse_fixed`: hand-worked masks (causal, bidirectional with a partial block), the definition
// with per-head summary offsets, weights against a dense masked softmax, and bad parameters.

#include "sparse_test_support.h"

using namespace sparse_test;

namespace {

ParamValues fixedParams(std::int64_t l, std::int64_t c, bool causal, std::vector<std::int64_t> offsets = {}) {
    return {{"block", l}, {"summary", c}, {"causal", causal}, {"summary_offsets", offsets}};
}

// A1 = {j : floor(j/l) = floor(i/l)}, A2 = {j : j mod l in [o, o + c)}; causal keeps j <= i.
bool fixedAllows(std::int64_t i, std::int64_t j, std::int64_t l, std::int64_t c, std::int64_t o, bool causal) {
    if (causal && j > i) return false;
    return j / l == i / l || (j % l >= o && j % l < o + c);
}

}  // namespace

TEST(SparseFixed, HandWorkedCausal) {
    auto x = randomQkv(1, 12, 4, 21);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "sparse_fixed", fixedParams(4, 1, true)));
    ASSERT_TRUE(r);
    const std::vector<std::string> expected = {"L...........", "LL..........", "LLL.........", "LLLL........",
                                               "...CL.......", "...CLL......", "...CLLL.....", "...CLLLL....",
                                               "...C...CL...", "...C...CLL..", "...C...CLLL.", "...C...CLLLL"};
    EXPECT_EQ(maskGrid(r->results[0], 0), expected);
    expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
}

TEST(SparseFixed, HandWorkedBidirectionalWithPartialLastBlock) {
    auto x = randomQkv(1, 10, 4, 22);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "sparse_fixed", fixedParams(4, 2, false)));
    ASSERT_TRUE(r);
    const std::vector<std::string> expected = {"LLLL..CC..", "LLLL..CC..", "LLLL..CC..", "LLLL..CC..", "..CCLLLL..",
                                               "..CCLLLL..", "..CCLLLL..", "..CCLLLL..", "..CC..CCLL", "..CC..CCLL"};
    EXPECT_EQ(maskGrid(r->results[0], 0), expected);
    expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
}

TEST(SparseFixed, MaskMatchesDefinitionWithPerHeadOffsets) {
    auto engine = makeEngine();
    const std::int64_t n = 16;
    auto x = randomQkv(2, n, 4, 23);
    for (std::int64_t l : {std::int64_t{1}, std::int64_t{3}, std::int64_t{4}, std::int64_t{5}, n})
        for (std::int64_t c = 1; c <= std::min<std::int64_t>(l, 2); ++c)
            for (bool causal : {true, false})
                for (const auto& offsets : {std::vector<std::int64_t>{}, std::vector<std::int64_t>{0, l - c}}) {
                    auto r = runOk(*engine, variantRequest(x, "sparse_fixed", fixedParams(l, c, causal, offsets)));
                    ASSERT_TRUE(r);
                    SCOPED_TRACE(testing::Message() << "l=" << l << " c=" << c << " causal=" << causal);
                    expectPatternEquals(r->results[0], [&](int h, std::int64_t i, std::int64_t j) {
                        return fixedAllows(i, j, l, c, offsets.empty() ? l - c : offsets[h], causal);
                    });
                    expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
                }
}

TEST(SparseFixed, WeightsMatchDenseMaskedSoftmaxAcrossTiles) {
    auto x = randomQkv(2, 300, 16, 24);
    auto engine = makeEngine();
    for (bool causal : {true, false}) {
        auto r = runOk(*engine, variantRequest(x, "sparse_fixed", fixedParams(96, 8, causal, {88, 40})));
        ASSERT_TRUE(r);
        expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
    }
}

TEST(SparseFixed, BadParametersAreOneLineErrors) {
    auto x = randomQkv(2, 8, 4, 25);
    auto engine = makeEngine();
    EXPECT_NE(errorOf(*engine, variantRequest(x, "sparse_fixed", fixedParams(9, 1, true))).find("block"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "sparse_fixed", fixedParams(4, 5, true))).find("summary"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "sparse_fixed", fixedParams(4, 2, true, {3}))).find("summary_offsets"),
              std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "sparse_fixed", fixedParams(4, 2, true, {0, 1, 2}))).find("per head"),
              std::string::npos);
}
