// The pattern variants' dense-plan fast path: its output (which the result carries with and
// without kept weights, so that both are the same bit for bit) must equal an independent dense
// masked softmax over the listed pattern, and the run without weights must give the same
// pattern, row status and counters as the run with them (whose weights come from the general
// tile kernel); repeated runs must reuse the pooled output buffer.

#include "sparse_test_support.h"

#include <algorithm>
#include <cmath>

namespace {

using namespace sparse_test;

struct FastCase {
    std::string id;
    ParamValues params;
    std::int64_t n;
};

// The pattern kernel against the reference: weights and output equal the masked softmax computed
// from Q, K, V and the pattern's multiplicities, and the counted FLOPs are the useful ones.
void expectSameAsGeneral(Engine& engine, const FastCase& c, std::int64_t d = 8) {
    SCOPED_TRACE(c.id + " n=" + std::to_string(c.n) + " d=" + std::to_string(d));
    const std::int64_t heads = 3;
    const Qkv3 x = randomQkv(heads, c.n, d, 11);
    const auto b = runOk(engine, variantRequest(x, c.id, c.params));
    ASSERT_TRUE(b);
    const AttentionResult& rb = b->results[0];
    double entries = 0;
    for (int h = 0; h < heads; ++h)
        for (int mult : multiplicity(rb, h)) entries += mult;
    EXPECT_DOUBLE_EQ(rb.counters.flops, 4.0 * d * entries);  // useful FLOPs only
    // The output against the reference computed here from Q, K, V and the pattern.
    expectMatchesMaskedSoftmax(rb, x.q, x.k, x.v);
}

TEST(SparseFastPath, MatchesGeneralKernel) {
    auto engine = makeEngine();
    const std::vector<FastCase> cases = {
        {"longformer", {{"window", std::int64_t{3}}}, 37},
        {"longformer", {{"window", std::int64_t{5}}, {"causal", true}}, 200},
        {"longformer", {{"window", std::int64_t{2}}, {"dilation", std::vector<std::int64_t>{1, 2, 3}}}, 41},
        {"longformer", {{"window", std::int64_t{70}}}, 300},
        // global tokens: window groups on runs of other rows plus their global keys outside the
        // window (two masked runs), runs of global rows against every key
        {"longformer", {{"window", std::int64_t{3}}, {"global", std::vector<std::int64_t>{0, 5, 6, 17, 36}}}, 37},
        {"longformer",
         {{"window", std::int64_t{4}}, {"global", std::vector<std::int64_t>{2, 3, 50, 99}}, {"causal", true}},
         100},
        {"longformer", {{"window", std::int64_t{70}}, {"global", std::vector<std::int64_t>{150, 0, 299}}}, 300},
        {"longformer",  // dilated with globals: window segments skip the global keys
         {{"window", std::int64_t{2}}, {"dilation", std::vector<std::int64_t>{1, 2, 3}}, {"global", std::vector<std::int64_t>{4}}},
         41},
        {"bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{2}}}, 48},
        {"bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{3}}, {"count_duplicates", false}}, 40},
        {"bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{1}}, {"form", std::string("etc")},
                     {"extra_global", std::int64_t{3}}},
         35},
        {"bigbird", {{"block", std::int64_t{64}}, {"random", std::int64_t{3}}}, 640},
        {"sparse_strided", {{"stride", std::int64_t{4}}}, 45},
        {"sparse_strided", {{"stride", std::int64_t{5}}, {"local", std::string("openai")}}, 61},
        {"sparse_strided", {{"stride", std::int64_t{3}}, {"combine", std::string("interleave")}}, 30},
        {"sparse_strided", {{"stride", std::int64_t{16}}}, 700},
        {"sparse_strided", {{"stride", std::int64_t{4}}, {"causal", false}}, 33},
        // non-causal: the strided keys above and below the band as two masked runs of one residue
        {"sparse_strided", {{"stride", std::int64_t{16}}, {"causal", false}}, 300},
        {"sparse_strided", {{"stride", std::int64_t{12}}, {"causal", false}, {"local", std::string("openai")}}, 250},
        {"sparse_strided",
         {{"stride", std::int64_t{16}}, {"causal", false}, {"combine", std::string("interleave")}},
         230},
        {"sparse_strided", {{"stride", std::int64_t{5}}, {"causal", false}, {"local", std::string("openai")}}, 7},
        // the strided keys pass with several groups of lane rows and blocks of keys (n / stride =
        // 125 and 113 lane rows), in panels (stride 8) and transposed (stride 9)
        {"sparse_strided", {{"stride", std::int64_t{8}}}, 1000},
        {"sparse_strided", {{"stride", std::int64_t{9}}, {"causal", false}}, 1017},
        {"sparse_fixed", {{"block", std::int64_t{8}}, {"summary", std::int64_t{2}}}, 50},
        {"sparse_fixed", {{"block", std::int64_t{8}}, {"summary", std::int64_t{3}}, {"causal", false}}, 45},
        {"sparse_fixed", {{"block", std::int64_t{6}}, {"summary", std::int64_t{2}},
                          {"summary_offsets", std::vector<std::int64_t>{0, 1, 4}}},
         40},
        {"sparse_fixed", {{"block", std::int64_t{128}}, {"summary", std::int64_t{16}}}, 700},
    };
    for (const auto& c : cases) expectSameAsGeneral(*engine, c);
}

// The fast path's register-tiled products take d in steps of 8 (a 16-wide panel plus an 8-wide
// one for d = 24 and 40) and fall back to the BLAS otherwise (d = 12); tiles of 1-5 rows left
// over at the ends of the sequence take the smaller blocks.
TEST(SparseFastPath, MatchesGeneralKernelForEveryHeadSize) {
    auto engine = makeEngine();
    for (std::int64_t d : {12, 24, 40, 64}) {
        expectSameAsGeneral(*engine, {"sparse_strided", {{"stride", std::int64_t{16}}}, 211}, d);
        // one group per item (no merge), the strided heads' keys from per-residue copies
        expectSameAsGeneral(
            *engine, {"sparse_strided", {{"stride", std::int64_t{24}}, {"combine", std::string("interleave")}}, 230},
            d);
        expectSameAsGeneral(*engine, {"sparse_strided", {{"stride", std::int64_t{16}}, {"causal", false}}, 211}, d);
        expectSameAsGeneral(*engine, {"longformer", {{"window", std::int64_t{9}}}, 103}, d);
        expectSameAsGeneral(*engine, {"longformer", {{"window", std::int64_t{9}}, {"global", std::vector<std::int64_t>{0, 40}}}, 103},
                            d);
        expectSameAsGeneral(*engine, {"sparse_fixed", {{"block", std::int64_t{16}}, {"summary", std::int64_t{3}}}, 97}, d);
    }
}

// sparse_strided's rows are split over a band group and a strided group; the strided part takes
// the band's max as its exp shift unless its own scores are far above it (more than 64 after
// scaling), when the two parts are merged by log-sum-exp instead. Both cases, on rows whose
// strided key scores 200 above (and 200 below) everything in their band.
TEST(SparseFastPath, SplitRowsWithFarApartParts) {
    auto engine = makeEngine();
    const std::int64_t heads = 2, n = 211, d = 64, l = 16;
    Qkv3 x = randomQkv(heads, n, d, 21);
    for (auto* t : {&x.q, &x.k})
        for (auto& value : t->f32) value *= 0.05f;
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i : {40, 41, 97, 150, 210}) {  // strided key j = i - 2l of row i (distinct residues)
            const std::int64_t j = i - 2 * l;
            const float sign = h == 0 ? 1.0f : -1.0f;  // head 1: the strided score far below
            x.q.f32[static_cast<std::size_t>((h * n + i) * d)] = 40.0f;
            x.k.f32[static_cast<std::size_t>((h * n + j) * d)] = sign * 40.0f;  // q·k = ±1600, /8 = ±200
        }
    const auto b = runOk(*engine, variantRequest(x, "sparse_strided", {{"stride", l}}));
    ASSERT_TRUE(b);
    expectMatchesMaskedSoftmax(b->results[0], x.q, x.k, x.v);
    const auto& ob = b->results[0].output;
    // row 40 of head 0 puts (nearly) all its weight on key 8: its output is that value row
    for (std::int64_t c = 0; c < d; ++c)
        EXPECT_NEAR(ob[static_cast<std::size_t>(40 * d + c)], x.v.f32[static_cast<std::size_t>(8 * d + c)], 1e-5);
}

TEST(SparseFastPath, RepeatedRunReusesPooledOutput) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 256, 16, 5);
    for (const std::string id : {"longformer", "bigbird", "sparse_strided", "sparse_fixed", "full"}) {
        SCOPED_TRACE(id);
        ParamValues params;
        if (id == "bigbird") params = {{"block", std::int64_t{16}}, {"random", std::int64_t{2}}};
        RunRequest request = variantRequest(x, id, params);
        const float* first = nullptr;
        {
            const auto r = runOk(*engine, request);
            ASSERT_TRUE(r);
            first = r->results[0].output.data();
        }
        const auto again = runOk(*engine, request);  // the first result was released
        ASSERT_TRUE(again);
        EXPECT_EQ(again->results[0].output.data(), first);
        const auto held = runOk(*engine, request);  // `again` still holds the buffer: a new one
        ASSERT_TRUE(held);
        EXPECT_NE(held->results[0].output.data(), again->results[0].output.data());
    }
}

}  // namespace
