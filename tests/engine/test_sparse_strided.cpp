// `sparse_strided`: hand-worked masks, an independent mask from the definition, and weights
// against a dense masked softmax.

#include "sparse_test_support.h"

using namespace sparse_test;

namespace {

ParamValues stridedParams(std::int64_t l, const std::string& local, bool causal, const std::string& combine) {
    return {{"stride", l}, {"local", local}, {"causal", causal}, {"combine", combine}};
}

// Straight from Child et al. §4: A1 = {max(0, i-l) .. i} (paper) or {i-l+1 .. i} (OpenAI);
// A2 = {j : (i - j) mod l = 0}; causal keeps j <= i, otherwise the band is mirrored.
bool stridedAllows(std::int64_t i, std::int64_t j, std::int64_t l, bool paper, bool causal, bool local, bool strided) {
    if (causal && j > i) return false;
    const std::int64_t dist = std::abs(i - j);
    const bool inBand = paper ? dist <= l : dist < l;
    const bool inStride = dist % l == 0;
    return (local && inBand) || (strided && inStride);
}

}  // namespace

TEST(SparseStrided, HandWorkedPaperAndOpenAiBands) {
    auto x = randomQkv(1, 8, 4, 1);
    auto engine = makeEngine();
    auto paper = runOk(*engine, variantRequest(x, "sparse_strided", stridedParams(3, "paper", true, "union")));
    ASSERT_TRUE(paper);
    const std::vector<std::string> expectedPaper = {"L.......", "LL......", "LLL.....", "LLLL....",
                                                    ".LLLL...", "..LLLL..", "S..LLLL.", ".S..LLLL"};
    EXPECT_EQ(maskGrid(paper->results[0], 0), expectedPaper);

    auto openai = runOk(*engine, variantRequest(x, "sparse_strided", stridedParams(3, "openai", true, "union")));
    ASSERT_TRUE(openai);
    const std::vector<std::string> expectedOpenAi = {"L.......", "LL......", "LLL.....", "SLLL....",
                                                     ".SLLL...", "..SLLL..", "S..SLLL.", ".S..SLLL"};
    EXPECT_EQ(maskGrid(openai->results[0], 0), expectedOpenAi);
}

TEST(SparseStrided, InterleaveGivesEvenHeadsLocalOddHeadsStrided) {
    auto x = randomQkv(2, 8, 4, 2);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "sparse_strided", stridedParams(3, "paper", true, "interleave")));
    ASSERT_TRUE(r);
    const std::vector<std::string> local = {"L.......", "LL......", "LLL.....", "LLLL....",
                                            ".LLLL...", "..LLLL..", "...LLLL.", "....LLLL"};
    const std::vector<std::string> strided = {"S.......", ".S......", "..S.....", "S..S....",
                                              ".S..S...", "..S..S..", "S..S..S.", ".S..S..S"};
    EXPECT_EQ(maskGrid(r->results[0], 0), local);
    EXPECT_EQ(maskGrid(r->results[0], 1), strided);
    expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
}

TEST(SparseStrided, MaskMatchesDefinitionForManySettings) {
    auto engine = makeEngine();
    for (std::int64_t n : {std::int64_t{13}, std::int64_t{16}}) {
        auto x = randomQkv(2, n, 4, 3);
        for (std::int64_t l : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{4}, std::int64_t{5}, n})
            for (const char* local : {"paper", "openai"})
                for (bool causal : {true, false})
                    for (const char* combine : {"union", "interleave"}) {
                        auto r = runOk(*engine, variantRequest(x, "sparse_strided", stridedParams(l, local, causal, combine)));
                        ASSERT_TRUE(r);
                        const bool paper = std::string(local) == "paper";
                        const bool interleave = std::string(combine) == "interleave";
                        SCOPED_TRACE(testing::Message() << "n=" << n << " l=" << l << " " << local << " causal=" << causal
                                                        << " " << combine);
                        expectPatternEquals(r->results[0], [&](int h, std::int64_t i, std::int64_t j) {
                            return stridedAllows(i, j, l, paper, causal, !interleave || h % 2 == 0,
                                                 !interleave || h % 2 == 1);
                        });
                        expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
                    }
    }
}

TEST(SparseStrided, WeightsMatchDenseMaskedSoftmaxAcrossTiles) {
    // n = 300 spans several 64-row tiles and residue chunks.
    auto x = randomQkv(2, 300, 16, 4);
    auto engine = makeEngine();
    for (bool causal : {true, false}) {
        auto r = runOk(*engine, variantRequest(x, "sparse_strided", stridedParams(17, "paper", causal, "union")));
        ASSERT_TRUE(r);
        const auto& res = r->results[0];
        expectMatchesMaskedSoftmax(res, x.q, x.k, x.v);
        // Only allowed entries are computed: far fewer than n^2 per head.
        EXPECT_LT(res.counters.entriesComputed, 2 * 300 * 300);
    }
}

TEST(SparseStrided, KeyPaddingMasksKeysAndZeroesQueries) {
    auto x = randomQkv(1, 40, 8, 5);
    auto engine = makeEngine();
    auto request = variantRequest(x, "sparse_strided", stridedParams(6, "paper", true, "union"));
    request.keyPadding.assign(40, 0);
    request.keyPadding[0] = 1;
    request.keyPadding[39] = 1;
    auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    for (std::int64_t i = 0; i < 40; ++i) EXPECT_EQ(res.weightAt(0, i, 0), 0.0f);
    EXPECT_EQ(res.rowStatus.u8[0], 2);   // padded query
    EXPECT_EQ(res.rowStatus.u8[39], 2);
    for (std::int64_t c = 0; c < 8; ++c) EXPECT_EQ(res.output[c], 0.0f);

    // (with a padded key the strided keys run as explicit residue groups: the same softmax)
    expectMatchesMaskedSoftmax(res, x.q, x.k, x.v, [&](int h) {
        std::vector<int> mult = multiplicity(res, h);
        for (std::int64_t i = 0; i < 40; ++i)
            for (std::int64_t j : {0, 39}) {
                mult[static_cast<std::size_t>(i * 40 + j)] = 0;
                mult[static_cast<std::size_t>(j * 40 + i)] = 0;
            }
        return mult;
    });
}

TEST(SparseStrided, BadStrideIsAOneLineError) {
    auto x = randomQkv(1, 8, 4, 6);
    auto engine = makeEngine();
    EXPECT_NE(errorOf(*engine, variantRequest(x, "sparse_strided", stridedParams(0, "paper", true, "union"))).find("stride"),
              std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "sparse_strided", stridedParams(9, "paper", true, "union"))).find("[1, n]"),
              std::string::npos);
}
