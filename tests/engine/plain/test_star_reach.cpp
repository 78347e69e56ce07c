// What reaches a Star-Transformer satellite: the flow recurrence worked by hand on three tokens,
// open and closed rings, the relay's share, and a pass of the wrong shape refused.

#include <attnscope/star_reach.h>

#include <gtest/gtest.h>

using namespace attnscope::engine;

namespace {

// n = 3, one cycle, one head: every satellite [left, self, right, embedding, relay] =
// [0.1, 0.4, 0.2, 0.2, 0.1]; the relay [itself, s0, s1, s2] = [0.4, 0.2, 0.2, 0.2].
StarPass handPass(bool cyclic) {
    StarPass p;
    p.n = 3;
    p.cycles = 1;
    p.heads = 1;
    p.cyclic = cyclic;
    p.ringWeights = PlainTensor::fromF32({1, 1, 3, 5}, {0.1f, 0.4f, 0.2f, 0.2f, 0.1f, 0.1f, 0.4f, 0.2f, 0.2f, 0.1f, 0.1f, 0.4f, 0.2f, 0.2f, 0.1f});
    p.relayWeights = PlainTensor::fromF32({1, 1, 4}, {0.4f, 0.2f, 0.2f, 0.2f});
    return p;
}

}  // namespace

TEST(StarReach, ClosedRingByHand) {
    auto r = starReach(handPass(true));
    ASSERT_TRUE(r.ok()) << r.error().message;
    // F¹[0] = 0.1·e2 + 0.4·e0 + 0.2·e1 + 0.2·e0 + 0.1·(⅓, ⅓, ⅓)
    EXPECT_NEAR(r->at(1, 0, 0), 0.4 + 0.2 + 0.1 / 3, 1e-6);
    EXPECT_NEAR(r->at(1, 0, 1), 0.2 + 0.1 / 3, 1e-6);
    EXPECT_NEAR(r->at(1, 0, 2), 0.1 + 0.1 / 3, 1e-6);
    for (std::int64_t i = 0; i < 3; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < 3; ++j) sum += r->at(1, i, j);
        EXPECT_NEAR(sum, 1.0, 1e-6);  // a closed ring loses nothing
    }
    // R¹ = 0.4·⅓ + 0.2·Σ_i F¹[i]; every column of F¹ sums to 1 here
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_NEAR(r->relay[1][static_cast<std::size_t>(j)], 0.4 / 3 + 0.2, 1e-6);
    EXPECT_EQ(r->ringDistance(0, 2), 1);
    EXPECT_DOUBLE_EQ(r->at(0, 1, 1), 1.0);  // F⁰ = I
}

TEST(StarReach, OpenRingLosesThePhantomsShare) {
    auto r = starReach(handPass(false));
    ASSERT_TRUE(r.ok());
    EXPECT_NEAR(r->at(1, 0, 0), 0.4 + 0.2 + 0.1 / 3, 1e-6);
    EXPECT_NEAR(r->at(1, 0, 1), 0.2 + 0.1 / 3, 1e-6);
    EXPECT_NEAR(r->at(1, 0, 2), 0.1 / 3, 1e-6);  // only through the relay
    double sum = 0;
    for (std::int64_t j = 0; j < 3; ++j) sum += r->at(1, 0, j);
    EXPECT_NEAR(sum, 0.9, 1e-6);  // the left phantom's 0.1 carries nothing
    EXPECT_EQ(r->ringDistance(0, 2), 2);
}

TEST(StarReach, RefusesAPassOfTheWrongShape) {
    StarPass p = handPass(true);
    p.relayWeights = PlainTensor::fromF32({1, 1, 3}, {0.5f, 0.25f, 0.25f});
    EXPECT_FALSE(starReach(p).ok());
}
