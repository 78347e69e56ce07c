// `star`: the ring + relay mask (open and cyclic), the relay column's key and value (means), and
// weights against a dense masked softmax over [tokens; relay].

#include "sparse_test_support.h"

using namespace sparse_test;

TEST(Star, HandWorkedRingAndRelay) {
    auto x = randomQkv(1, 8, 4, 61);
    auto engine = makeEngine();
    auto open = runOk(*engine, variantRequest(x, "star", {{"cyclic", false}}));
    auto cyclic = runOk(*engine, variantRequest(x, "star", {{"cyclic", true}}));
    ASSERT_TRUE(open && cyclic);
    EXPECT_EQ(open->results[0].m, 9);
    EXPECT_EQ(maskGrid(open->results[0], 0),
              (std::vector<std::string>{"OO......Y", "OOO.....Y", ".OOO....Y", "..OOO...Y", "...OOO..Y", "....OOO.Y",
                                        ".....OOOY", "......OOY"}));
    EXPECT_EQ(maskGrid(cyclic->results[0], 0),
              (std::vector<std::string>{"OO.....OY", "OOO.....Y", ".OOO....Y", "..OOO...Y", "...OOO..Y", "....OOO.Y",
                                        ".....OOOY", "O.....OOY"}));
}

TEST(Star, WeightsMatchMaskedSoftmaxWithMeanRelay) {
    const std::int64_t h = 2, n = 150, d = 8;
    auto x = randomQkv(h, n, d, 62);
    auto engine = makeEngine();
    for (bool cyclic : {false, true}) {
        auto r = runOk(*engine, variantRequest(x, "star", {{"cyclic", cyclic}}));
        ASSERT_TRUE(r);
        // The reference sees keys and values [tokens; mean of tokens].
        PlainTensor k = PlainTensor::zeros(DType::F32, {h, n + 1, d}), v = k;
        for (std::int64_t hh = 0; hh < h; ++hh)
            for (std::int64_t j = 0; j <= n; ++j)
                for (std::int64_t c = 0; c < d; ++c) {
                    double sk = 0, sv = 0;
                    if (j == n) {
                        for (std::int64_t t = 0; t < n; ++t) {
                            sk += x.k.f32[(hh * n + t) * d + c];
                            sv += x.v.f32[(hh * n + t) * d + c];
                        }
                        sk /= n;
                        sv /= n;
                    } else {
                        sk = x.k.f32[(hh * n + j) * d + c];
                        sv = x.v.f32[(hh * n + j) * d + c];
                    }
                    k.f32[(hh * (n + 1) + j) * d + c] = static_cast<float>(sk);
                    v.f32[(hh * (n + 1) + j) * d + c] = static_cast<float>(sv);
                }
        expectMatchesMaskedSoftmax(r->results[0], x.q, k, v);
        const auto& relay = r->results[0].diagnostics.at("relay_weights");
        ASSERT_EQ(relay.shape, (std::vector<std::int64_t>{h, n + 1}));
        double sum = 0;
        for (std::int64_t j = 0; j <= n; ++j) sum += relay.f32[j];
        EXPECT_NEAR(sum, 1.0, 1e-5);
    }
}
