// The Cost tab's Switch-versus-dense measurement: the bytes follow from the sizes (E experts of
// 2·d·d_ff + d_ff + d weights and an E × d router against one FFN), the capacity and drops are
// the router's, both passes take time, bad settings are refused by name and Cancel stops it.

#include <attnscope/switch_ffn_cost.h>

#include <gtest/gtest.h>

#include <cmath>

using namespace attnscope::engine;

TEST(SwitchFfnCost, BytesCapacityAndDropsFollowFromTheSettings) {
    SwitchFfnCostSettings s;
    s.dModel = 16;
    s.dFF = 32;
    s.experts = 4;
    s.capacityFactor = 1.0;
    s.repeats = 2;
    auto point = measureSwitchFfnCost(s, 64);
    ASSERT_TRUE(point.ok()) << point.error().message;
    const std::uint64_t ffn = 2 * 16 * 32 + 32 + 16;  // 1072 weights
    EXPECT_EQ(point->denseWeightBytes, 4 * ffn);
    EXPECT_EQ(point->switchWeightBytes, 4 * (4 * ffn + 4 * 16));
    EXPECT_EQ(point->capacity, 16);  // ceil(64 / 4 · 1.0)
    EXPECT_GE(point->dropped, 0);
    EXPECT_LE(point->dropped, 64 - 16);  // at least one expert's slots are filled
    // the dense inner and output; the Switch layer's logits and probabilities plus the kept tokens' rows
    EXPECT_EQ(point->denseActivationBytes, 4u * (64 * 32 + 64 * 16));
    EXPECT_EQ(point->switchActivationBytes, 4u * (2 * 64 * 4 + std::uint64_t(64 - point->dropped) * (16 + 32 + 16) + 64 * 16));
    EXPECT_GT(point->denseSeconds, 0);
    EXPECT_GT(point->switchSeconds, 0);
    // dropless: nothing dropped, no capacity
    s.capacityFactor = 0;
    auto dropless = measureSwitchFfnCost(s, 64);
    ASSERT_TRUE(dropless.ok());
    EXPECT_EQ(dropless->dropped, 0);
    EXPECT_EQ(dropless->capacity, 0);
}

TEST(SwitchFfnCost, BadSettingsAreRefusedByNameAndCancelStops) {
    SwitchFfnCostSettings s;
    auto tokens = measureSwitchFfnCost(s, 0);
    ASSERT_FALSE(tokens.ok());
    EXPECT_NE(tokens.error().message.find("tokens must be in [1, 65536]"), std::string::npos);
    s.experts = 0;
    auto experts = measureSwitchFfnCost(s, 8);
    ASSERT_FALSE(experts.ok());
    EXPECT_NE(experts.error().message.find("experts"), std::string::npos);
    s.experts = 2;
    s.capacityFactor = -1;
    auto factor = measureSwitchFfnCost(s, 8);
    ASSERT_FALSE(factor.ok());
    EXPECT_NE(factor.error().message.find("capacity factor"), std::string::npos);
    s.capacityFactor = 1;
    auto cancelled = measureSwitchFfnCost(s, 8, [](const Progress& p) { return p.done < 2; });
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code, ErrorCode::Cancelled);
}
