// Expert specialisation and co-activation on hand-worked routings: which token texts each expert
// takes most (ties in text order), and the tokens two experts share under top-2.

#include <attnscope/moe_expert_stats.h>

#include <gtest/gtest.h>

using namespace attnscope::engine;

namespace {

TokenizedInput tokensOf(const std::vector<std::string>& texts) {
    TokenizedInput input;
    for (const auto& text : texts) {
        Token t;
        t.text = text;
        input.tokens.push_back(t);
    }
    return input;
}

Routing choices(std::int64_t experts, std::int64_t k, std::vector<std::int64_t> expert) {
    Routing r;
    r.experts = experts;
    r.k = k;
    r.n = static_cast<std::int64_t>(expert.size()) / k;
    r.expert = std::move(expert);
    return r;
}

}  // namespace

TEST(MoeExpertStats, TokensEachExpertTakesMostInOrderOfCount) {
    // "the" ×3 and "a" ×1 to expert 0; "cat" ×2, "sat" ×1 to expert 1; expert 2 gets nothing
    const auto input = tokensOf({"the", "cat", "the", "sat", "a", "cat", "the"});
    const Routing r = choices(3, 1, {0, 1, 0, 1, 0, 1, 0});
    const auto lists = tokensPerExpert(r, input, 5);
    ASSERT_EQ(lists.size(), 3u);
    ASSERT_EQ(lists[0].size(), 2u);
    EXPECT_EQ(lists[0][0].token, "the");
    EXPECT_EQ(lists[0][0].count, 3);
    EXPECT_EQ(lists[0][1].token, "a");
    ASSERT_EQ(lists[1].size(), 2u);
    EXPECT_EQ(lists[1][0].token, "cat");
    EXPECT_EQ(lists[1][0].count, 2);
    EXPECT_EQ(lists[1][1].token, "sat");
    EXPECT_TRUE(lists[2].empty());
    // at most `top`; a tie keeps the text order ("the" before "a" when both count 1)
    const auto one = tokensPerExpert(choices(1, 1, {0, 0}), tokensOf({"the", "a"}), 1);
    ASSERT_EQ(one[0].size(), 1u);
    EXPECT_EQ(one[0][0].token, "the");
}

TEST(MoeExpertStats, CoactivationCountsTokensSharingTwoExperts) {
    // top-2 over 3 experts: token 0 → {0, 1}, token 1 → {1, 0}, token 2 → {2, 1}
    const Routing r = choices(3, 2, {0, 1, 1, 0, 2, 1});
    const auto m = expertCoactivation(r);
    const std::vector<std::int64_t> expected = {2, 2, 0,   //
                                                2, 3, 1,   //
                                                0, 1, 1};
    EXPECT_EQ(m, expected);
    // top-1: only the diagonal, the tokens per expert
    const auto single = expertCoactivation(choices(2, 1, {0, 1, 1}));
    EXPECT_EQ(single, (std::vector<std::int64_t>{1, 0, 0, 2}));
}
