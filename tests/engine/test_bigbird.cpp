// `bigbird`: the hand-worked block layout, the mask rebuilt from the stored random draws (with
// duplicates), weights against a dense masked softmax with multiplicities, ETC, the element
// graph, seeds and bad parameters.

#include "sparse_test_support.h"

#include <set>

using namespace sparse_test;

namespace {

ParamValues bigbirdParams(std::int64_t b, std::int64_t r, bool dups = true, const std::string& form = "itc",
                          std::int64_t extra = 2) {
    return {{"block", b}, {"random", r}, {"count_duplicates", dups}, {"form", form}, {"extra_global", extra}};
}

// Multiplicity matrix of one head from the key-block lists of VARIANTS.md §5 and rand_attn.
std::vector<int> expectedBlockMask(const AttentionResult& res, int h, std::int64_t b, std::int64_t r, bool etc,
                                   std::int64_t g, bool dups) {
    const std::int64_t n = res.n, nb = (n - g) / b;
    const auto& rand = res.diagnostics.at("rand_attn");
    const std::int64_t rows = rand.shape[1];
    std::vector<int> mult(static_cast<std::size_t>(n * n), 0);
    for (std::int64_t i = 0; i < n; ++i) {
        const bool globalRow = etc ? i < g : (i / b == 0 || i / b == nb - 1);
        if (globalRow) {
            for (std::int64_t j = 0; j < n; ++j) mult[i * n + j] = 1;
            continue;
        }
        const std::int64_t qb = (i - g) / b;
        std::vector<std::int64_t> blocks;
        if (etc) {
            for (std::int64_t c = std::max<std::int64_t>(0, qb - 1); c <= std::min(nb - 1, qb + 1); ++c) blocks.push_back(c);
            for (std::int64_t s = 0; s < r; ++s) blocks.push_back(rand.i64[(h * rows + qb) * r + s]);
            for (std::int64_t j = 0; j < g; ++j) mult[i * n + j] = 1;
        } else {
            if (qb == 1) blocks = {0, 1, 2, nb - 1};
            else if (qb == nb - 2) blocks = {0, nb - 3, nb - 2, nb - 1};
            else blocks = {0, qb - 1, qb, qb + 1, nb - 1};
            for (std::int64_t s = 0; s < r; ++s) blocks.push_back(rand.i64[(h * rows + qb - 1) * r + s]);
        }
        for (std::int64_t blk : blocks)
            for (std::int64_t j = g + blk * b; j < g + (blk + 1) * b; ++j) mult[i * n + j] = dups ? mult[i * n + j] + 1 : 1;
    }
    return mult;
}

}  // namespace

TEST(BigBird, HandWorkedLayoutWithoutRandomBlocks) {
    auto x = randomQkv(1, 12, 4, 31);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "bigbird", bigbirdParams(2, 0)));
    ASSERT_TRUE(r);
    const std::vector<std::string> expected = {"GGGGGGGGGGGG", "GGGGGGGGGGGG", "GGLLLL....GG", "GGLLLL....GG",
                                               "GGLLLLLL..GG", "GGLLLLLL..GG", "GG..LLLLLLGG", "GG..LLLLLLGG",
                                               "GG....LLLLGG", "GG....LLLLGG", "GGGGGGGGGGGG", "GGGGGGGGGGGG"};
    EXPECT_EQ(maskGrid(r->results[0], 0), expected);
    EXPECT_EQ(r->results[0].diagnostics.at("rand_attn").shape, (std::vector<std::int64_t>{1, 4, 0}));
    expectMatchesMaskedSoftmax(r->results[0], x.q, x.k, x.v);
}

TEST(BigBird, StoredDrawsReproduceTheMaskAndDuplicatesCountTwice) {
    auto x = randomQkv(2, 24, 8, 32);  // b = 3, nb = 8, r = 2
    auto engine = makeEngine();
    bool sawDuplicate = false;
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
        for (bool dups : {true, false}) {
            auto request = variantRequest(x, "bigbird", bigbirdParams(3, 2, dups));
            request.projection.seed = seed;
            auto r = runOk(*engine, request);
            ASSERT_TRUE(r);
            const auto& res = r->results[0];
            const auto& rand = res.diagnostics.at("rand_attn");
            const auto& hits = res.diagnostics.at("rand_hits");
            ASSERT_EQ(rand.shape, (std::vector<std::int64_t>{2, 6, 2}));
            for (int h = 0; h < 2; ++h) {
                EXPECT_EQ(multiplicity(res, h), expectedBlockMask(res, h, 3, 2, false, 0, dups)) << "seed " << seed;
                for (std::int64_t t = 0; t < 6; ++t) {
                    const std::int64_t qb = t + 1;
                    std::set<std::int64_t> row;
                    for (std::int64_t s = 0; s < 2; ++s) {
                        const std::int64_t blk = rand.i64[(h * 6 + t) * 2 + s];
                        row.insert(blk);
                        EXPECT_GE(blk, 1);  // drawn from the middle blocks
                        EXPECT_LE(blk, 6);
                        const int hit = std::abs(blk - qb) <= 1 ? 1 : 0;
                        EXPECT_EQ(hits.u8[(h * 6 + t) * 2 + s], hit);
                        // the paper plan keeps draws out of the window except in the last two rows
                        if (qb < 5) {
                            EXPECT_EQ(hit, 0);
                        }
                        if (hit && dups) sawDuplicate = true;
                    }
                    EXPECT_EQ(row.size(), 2u) << "distinct draws per row";
                }
            }
            expectMatchesMaskedSoftmax(res, x.q, x.k, x.v);
        }
    }
    EXPECT_TRUE(sawDuplicate) << "some seed should hit a window block";
}

TEST(BigBird, SameSeedSameDraws) {
    auto x = randomQkv(1, 32, 4, 33);
    auto engine = makeEngine();
    auto request = variantRequest(x, "bigbird", bigbirdParams(2, 3));
    request.projection.seed = 7;
    auto a = runOk(*engine, request), b = runOk(*engine, request);
    request.projection.seed = 8;
    auto c = runOk(*engine, request);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(a->results[0].diagnostics.at("rand_attn").i64, b->results[0].diagnostics.at("rand_attn").i64);
    EXPECT_NE(a->results[0].diagnostics.at("rand_attn").i64, c->results[0].diagnostics.at("rand_attn").i64);
}

TEST(BigBird, EtcPrependsExtraGlobalTokens) {
    auto x = randomQkv(2, 14, 4, 34);  // g = 2, then 6 blocks of 2
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "bigbird", bigbirdParams(2, 1, true, "etc", 2)));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    ASSERT_EQ(res.diagnostics.at("rand_attn").shape, (std::vector<std::int64_t>{2, 6, 1}));
    for (int h = 0; h < 2; ++h) EXPECT_EQ(multiplicity(res, h), expectedBlockMask(res, h, 2, 1, true, 2, true));
    for (auto hit : res.diagnostics.at("rand_hits").u8) EXPECT_EQ(hit, 0);
    expectMatchesMaskedSoftmax(res, x.q, x.k, x.v);
}

TEST(BigBird, ElementGraphIsTheSecondMask) {
    auto x = randomQkv(1, 16, 4, 35);  // b = 2: window |i - j| <= 3, globals 0, 1, 14, 15
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "bigbird", bigbirdParams(2, 1)));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    const AttentionWeights& graph = *res.extraPatterns.at("element_graph");
    const auto& rand = res.diagnostics.at("rand_attn").i64;
    ASSERT_EQ(graph.queries(), 16);
    for (std::int64_t i = 0; i < 16; ++i) {
        std::set<std::int64_t> got;
        graph.forEachRow(0, i, i + 1, [&](const RowEntries& row) {
            got.insert(row.keys, row.keys + row.count);
            return true;
        });
        std::set<std::int64_t> want;
        const auto global = [](std::int64_t t) { return t < 2 || t >= 14; };
        for (std::int64_t j = 0; j < 16; ++j)
            if (global(i) || global(j) || std::abs(i - j) <= 3) want.insert(j);
        if (!global(i)) {
            const std::int64_t blk = rand[i / 2 - 1];
            want.insert(2 * blk);
            want.insert(2 * blk + 1);
        }
        EXPECT_EQ(got, want) << "query " << i;
    }
}

TEST(BigBird, BadParametersAreOneLineErrors) {
    auto x = randomQkv(1, 16, 4, 36);
    auto engine = makeEngine();
    EXPECT_NE(errorOf(*engine, variantRequest(x, "bigbird", bigbirdParams(3, 0))).find("multiple"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "bigbird", bigbirdParams(3, 0))).find("pad=true"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "bigbird", bigbirdParams(8, 0))).find("too few"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "bigbird", bigbirdParams(2, 4))).find("too few"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "bigbird", bigbirdParams(2, 0, true, "etc", 16))).find("extra_global"),
              std::string::npos);
}

// pad = true: n = 11 with b = 2 is padded to 12 with one masked token. Hand-worked (r = 0): the
// last block {10, 11} is global, so every row attends key 10 but never the padding key 11, and
// row 10 (a global row) attends every real key; the result holds the 11 real tokens only.
TEST(BigBird, PadExtendsToABlockMultipleAndReportsTheRealTokens) {
    auto x = randomQkv(1, 11, 4, 37);
    auto engine = makeEngine();
    ParamValues params = bigbirdParams(2, 0);
    params["pad"] = true;
    auto r = runOk(*engine, variantRequest(x, "bigbird", params));
    ASSERT_TRUE(r);
    const AttentionResult& res = r->results[0];
    EXPECT_EQ(res.n, 11);
    EXPECT_EQ(res.output.shape, (std::vector<std::int64_t>{1, 11, 4}));
    const std::vector<std::string> expected = {"GGGGGGGGGGG", "GGGGGGGGGGG", "GGLLLL....G", "GGLLLL....G",
                                               "GGLLLLLL..G", "GGLLLLLL..G", "GG..LLLLLLG", "GG..LLLLLLG",
                                               "GG....LLLLG", "GG....LLLLG", "GGGGGGGGGGG"};
    EXPECT_EQ(maskGrid(res, 0), expected);
    EXPECT_EQ(res.diagnostics.at("padded_length").i64, (std::vector<std::int64_t>{12}));
    EXPECT_EQ(res.rowStatus.u8.size(), 0u) << "no real row is empty or padded";
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_NE(r->warnings[0].find("padded 11 tokens to 12"), std::string::npos) << r->warnings[0];
    expectMatchesMaskedSoftmax(res, x.q, x.k, x.v);
}

// With random blocks, ETC and kept weights: the padded run equals the same sequence extended by
// hand with a token the request masks (key padding), restricted to the real tokens.
TEST(BigBird, PadEqualsAnExplicitlyMaskedToken) {
    auto engine = makeEngine();
    for (const std::string form : {"itc", "etc"}) {
        SCOPED_TRACE(form);
        // itc: 37 → 40; etc: g = 2 and 35 long tokens → 2 + 36
        const std::int64_t n = 37, padded = form == "itc" ? 40 : 38, heads = 2, d = 8;
        const Qkv3 big = randomQkv(heads, padded, d, 38);
        Qkv3 x;
        const auto head = [&](const PlainTensor& t) {
            std::vector<float> v;
            for (std::int64_t h = 0; h < heads; ++h)
                v.insert(v.end(), t.f32.begin() + h * padded * d, t.f32.begin() + (h * padded + n) * d);
            return PlainTensor::fromF32({heads, n, d}, v);
        };
        x = {head(big.q), head(big.k), head(big.v)};
        ParamValues params = bigbirdParams(4, 2, true, form, 2);
        params["pad"] = true;
        auto padRun = runOk(*engine, variantRequest(x, "bigbird", params));
        ASSERT_TRUE(padRun);
        // the same 40 tokens by hand: the 40 - n extra rows are zeros, masked as key padding
        Qkv3 manual = big;
        for (auto* t : {&manual.q, &manual.k, &manual.v})
            for (std::int64_t h = 0; h < heads; ++h)
                std::fill(t->f32.begin() + (h * padded + n) * d, t->f32.begin() + (h + 1) * padded * d, 0.0f);
        params["pad"] = false;
        RunRequest request = variantRequest(manual, "bigbird", params);
        request.keyPadding.assign(padded, 0);
        std::fill(request.keyPadding.begin() + n, request.keyPadding.end(), 1);
        auto maskRun = runOk(*engine, request);
        ASSERT_TRUE(maskRun);
        const AttentionResult &a = padRun->results[0], &b = maskRun->results[0];
        EXPECT_EQ(a.diagnostics.at("rand_attn").i64, b.diagnostics.at("rand_attn").i64);
        for (int h = 0; h < heads; ++h) {
            const auto ma = multiplicity(a, h), mb = multiplicity(b, h);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j) {
                    ASSERT_EQ(ma[i * n + j], mb[i * padded + j]) << "head " << h << " query " << i << " key " << j;
                    ASSERT_EQ(a.weightAt(h, i, j), b.weightAt(h, i, j));
                }
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t c = 0; c < d; ++c)
                    ASSERT_EQ(a.output[(h * n + i) * d + c], b.output[(h * padded + i) * d + c]);
        }
        expectMatchesMaskedSoftmax(a, x.q, x.k, x.v);
        // the element graph is cropped the same way: n rows, no key at or past n
        const AttentionWeights& graph = *a.extraPatterns.at("element_graph");
        EXPECT_EQ(graph.queries(), n);
        EXPECT_EQ(graph.keys(), n);
        for (int hh = 0; hh < heads; ++hh)
            graph.forEachRow(hh, 0, n, [&](const RowEntries& row) {
                EXPECT_TRUE(std::all_of(row.keys, row.keys + row.count, [&](std::int32_t j) { return j < n; }));
                return true;
            });
    }
}

// The request's own key padding survives the padding: its query row stays zeroed (status 2) and
// its key takes no weight; a sequence that needs no padding gets no notice.
TEST(BigBird, PadKeepsTheRequestsKeyPadding) {
    auto x = randomQkv(1, 11, 4, 39);
    auto engine = makeEngine();
    ParamValues params = bigbirdParams(2, 0);
    params["pad"] = true;
    RunRequest request = variantRequest(x, "bigbird", params);
    request.keyPadding.assign(11, 0);
    request.keyPadding[3] = 1;
    auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    const AttentionResult& res = r->results[0];
    ASSERT_EQ(res.rowStatus.u8.size(), 11u);
    for (std::int64_t i = 0; i < 11; ++i) {
        EXPECT_EQ(res.rowStatus.u8[i], i == 3 ? 2 : 0) << "query " << i;
        EXPECT_EQ(res.weightAt(0, i, 3), 0.0f) << "query " << i;
        float sum = 0;
        for (std::int64_t j = 0; j < 11; ++j) sum += res.weightAt(0, i, j);
        EXPECT_NEAR(sum, i == 3 ? 0.0f : 1.0f, 1e-5f) << "query " << i;
    }
    auto whole = runOk(*engine, variantRequest(randomQkv(1, 12, 4, 40), "bigbird", params));
    ASSERT_TRUE(whole);
    EXPECT_TRUE(whole->warnings.empty());
    EXPECT_EQ(whole->results[0].diagnostics.count("padded_length"), 0u);
}
