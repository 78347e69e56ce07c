// `longformer`: hand-worked dilated mask with a global token, the definition for many settings,
// weights against a dense masked softmax, and bad parameters.

#include "sparse_test_support.h"

using namespace sparse_test;

namespace {

ParamValues longformerParams(std::int64_t w, std::vector<std::int64_t> dilation, std::vector<std::int64_t> global,
                             bool causal) {
    return {{"window", w}, {"dilation", dilation}, {"global", global}, {"causal", causal}};
}

// VARIANTS.md §4: keys i + t·d for |t| <= w (t <= 0 when causal); global tokens attend to every
// key and every query attends to them; causal applies to everything.
bool longformerAllows(std::int64_t i, std::int64_t j, std::int64_t w, std::int64_t d, const std::vector<std::int64_t>& g,
                      bool causal) {
    if (causal && j > i) return false;
    const auto isGlobal = [&](std::int64_t t) { return std::find(g.begin(), g.end(), t) != g.end(); };
    if (isGlobal(i) || isGlobal(j)) return true;
    const std::int64_t dist = std::abs(i - j);
    return dist % d == 0 && dist / d <= w;
}

}  // namespace

TEST(Longformer, HandWorkedDilatedWindowWithGlobalToken) {
    auto x = randomQkv(1, 10, 4, 11);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "longformer", longformerParams(1, {2}, {0}, false)));
    ASSERT_TRUE(r);
    const std::vector<std::string> expected = {"GGGGGGGGGG", "GD.D......", "G.D.D.....", "GD.D.D....", "G.D.D.D...",
                                               "G..D.D.D..", "G...D.D.D.", "G....D.D.D", "G.....D.D.", "G......D.D"};
    EXPECT_EQ(maskGrid(r->results[0], 0), expected);
    expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
}

TEST(Longformer, HandWorkedCausalWindow) {
    auto x = randomQkv(1, 8, 4, 12);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "longformer", longformerParams(2, {1}, {5}, true)));
    ASSERT_TRUE(r);
    // Global 5 attends 0..5 (causal); rows 6, 7 see global 5 (inside their window, listed once).
    const std::vector<std::string> expected = {"L.......", "LL......", "LLL.....", ".LLL....",
                                               "..LLL...", "GGGGGG..", "....LGL.", ".....GLL"};
    EXPECT_EQ(maskGrid(r->results[0], 0), expected);
}

TEST(Longformer, MaskMatchesDefinitionPerHeadDilation) {
    auto engine = makeEngine();
    const std::int64_t n = 16;
    auto x = randomQkv(3, n, 4, 13);
    for (std::int64_t w : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, n - 1})
        for (bool causal : {false, true})
            for (const auto& global : {std::vector<std::int64_t>{}, std::vector<std::int64_t>{0, 7, 15}})
                for (const auto& dilation : {std::vector<std::int64_t>{1}, std::vector<std::int64_t>{1, 2, 3}}) {
                    auto r = runOk(*engine, variantRequest(x, "longformer", longformerParams(w, dilation, global, causal)));
                    ASSERT_TRUE(r);
                    SCOPED_TRACE(testing::Message() << "w=" << w << " causal=" << causal << " g=" << global.size()
                                                    << " dil=" << dilation.size());
                    expectPatternEquals(r->results[0], [&](int h, std::int64_t i, std::int64_t j) {
                        return longformerAllows(i, j, w, dilation.size() > 1 ? dilation[h] : dilation[0], global, causal);
                    });
                    expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
                }
}

TEST(Longformer, WeightsMatchDenseMaskedSoftmaxAcrossTiles) {
    auto x = randomQkv(2, 257, 16, 14);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "longformer", longformerParams(20, {1, 3}, {3, 100, 256}, false)));
    ASSERT_TRUE(r);
    expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
    // Linear work: each of the 257 rows computes a few tiles' worth of keys, not all 257.
    EXPECT_LT(r->results[0].counters.entriesComputed, 2 * 257 * 257);
}

// A window reaching past the text is the whole text: clamped to n - 1 with a notice, recorded in
// the result, and the weights are exactly those of window n - 1.
TEST(Longformer, AWindowPastTheTextIsClampedWithANotice) {
    auto x = randomQkv(2, 8, 4, 15);
    auto engine = makeEngine();
    auto wide = runOk(*engine, variantRequest(x, "longformer", longformerParams(100, {1}, {}, false)));
    ASSERT_TRUE(wide);
    EXPECT_EQ(std::get<std::int64_t>(wide->results[0].params.at("window")), 7);
    ASSERT_EQ(wide->warnings.size(), 1u);
    EXPECT_EQ(wide->warnings[0], "longformer: window = 100 reaches past the 8 tokens; using window = 7");
    auto exact = runOk(*engine, variantRequest(x, "longformer", longformerParams(7, {1}, {}, false)));
    ASSERT_TRUE(exact);
    for (int h = 0; h < 2; ++h)
        for (std::int64_t i = 0; i < 8; ++i)
            for (std::int64_t j = 0; j < 8; ++j) EXPECT_EQ(wide->results[0].weightAt(h, i, j), exact->results[0].weightAt(h, i, j));
}

TEST(Longformer, BadParametersAreOneLineErrors) {
    auto x = randomQkv(2, 8, 4, 15);
    auto engine = makeEngine();
    EXPECT_NE(errorOf(*engine, variantRequest(x, "longformer", longformerParams(2, {1, 2, 3}, {}, false))).find("dilation"),
              std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "longformer", longformerParams(2, {0}, {}, false))).find("dilation"),
              std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "longformer", longformerParams(2, {1}, {8}, false))).find("out of range"),
              std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "longformer", longformerParams(2, {1}, {3, 3}, false))).find("twice"),
              std::string::npos);
}
