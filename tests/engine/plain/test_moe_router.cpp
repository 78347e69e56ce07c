// MoE routing: hand-worked cases (8 tokens, 4 experts, capacity 2, both priorities; ties; capacity
// 0 and 1; k = E; groups), the losses against their formulas computed here, and bad input.

#include <attnscope/moe_router.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace attnscope::engine;

namespace {

// Logits that make token t choose expert `first[t]` with a margin that sets its gate.
PlainTensor logitsChoosing(const std::vector<int>& first, const std::vector<float>& margin, int experts) {
    PlainTensor l = PlainTensor::zeros(DType::F32, {static_cast<std::int64_t>(first.size()), experts});
    for (std::size_t t = 0; t < first.size(); ++t) l.f32[t * experts + first[t]] = margin[t];
    return l;
}

Routing routed(const PlainTensor& logits, RouterOptions o) {
    auto r = routeTokens(logits, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r.value() : Routing{};
}

}  // namespace

TEST(MoeRouter, WorkedExampleEightTokensFourExpertsCapacityTwo) {
    // Tokens choose experts 0 0 0 1 1 2 0 3; expert 0 is asked four times. capacity_factor 1:
    // capacity = ceil(1 · 8 / 4 · 1) = 2.
    const std::vector<int> first = {0, 0, 0, 1, 1, 2, 0, 3};
    const std::vector<float> margin = {1.0f, 3.0f, 2.0f, 1.0f, 1.0f, 1.0f, 4.0f, 1.0f};
    const PlainTensor logits = logitsChoosing(first, margin, 4);
    RouterOptions o;
    o.capacityFactor = 1.0;
    const Routing seq = routed(logits, o);
    EXPECT_EQ(seq.capacity, 2);
    EXPECT_EQ(seq.expert, (std::vector<std::int64_t>{0, 0, 0, 1, 1, 2, 0, 3}));
    // sequence priority: tokens 0 and 1 take expert 0's slots; 2 and 6 are dropped
    EXPECT_EQ(seq.position, (std::vector<std::int64_t>{1, 2, 3, 1, 2, 1, 4, 1}));
    EXPECT_EQ(seq.kept, (std::vector<std::uint8_t>{1, 1, 0, 1, 1, 1, 0, 1}));
    EXPECT_EQ(seq.dropped, 2);
    EXPECT_EQ(seq.expertCounts, (std::vector<std::int64_t>{4, 2, 1, 1}));
    EXPECT_EQ(seq.keptCounts, (std::vector<std::int64_t>{2, 2, 1, 1}));
    // gate priority: the highest gates first: token 6 (margin 4), then 1 (3); 2 and 0 dropped
    o.priority = "gate";
    const Routing gate = routed(logits, o);
    EXPECT_EQ(gate.kept, (std::vector<std::uint8_t>{0, 1, 0, 1, 1, 1, 1, 1}));
    EXPECT_EQ(gate.position[6], 1);
    EXPECT_EQ(gate.position[1], 2);
    // the gate of a top-1 route is the router probability: e^m / (e^m + 3)
    EXPECT_NEAR(seq.gate[6], std::exp(4.0) / (std::exp(4.0) + 3.0), 1e-6);
    // capacity factor 1.25: ceil(2.5) = 3; no capacity: nobody dropped
    o.priority = "sequence";
    o.capacityFactor = 1.25;
    EXPECT_EQ(routed(logits, o).capacity, 3);
    EXPECT_EQ(routed(logits, o).dropped, 1);
    o.capacityFactor = 0;
    EXPECT_EQ(routed(logits, o).capacity, 0);
    EXPECT_EQ(routed(logits, o).dropped, 0);
    // the aux loss: f from the choices before dropping (the paper), or with dropped choices as
    // expert 0 (Hugging Face): tokens 2 and 6 are expert 0's anyway, so equal here; with
    // capacity 1 expert 1's dropped token 4 moves to expert 0 and f changes
    o.capacityFactor = 0;
    o.expertCapacity = 1;
    o.droppedAs = "expert0";
    const Routing hf = routed(logits, o);
    o.droppedAs = "paper";
    const Routing paper = routed(logits, o);
    double fPaper[4] = {4, 2, 1, 1}, fHf[4] = {5, 1, 1, 1}, pe[4] = {0, 0, 0, 0};
    for (int t = 0; t < 8; ++t)
        for (int e = 0; e < 4; ++e) pe[e] += paper.probs[t * 4 + e] / 8.0;
    double auxPaper = 0, auxHf = 0;
    for (int e = 0; e < 4; ++e) {
        auxPaper += 4 * fPaper[e] / 8 * pe[e];
        auxHf += 4 * fHf[e] / 8 * pe[e];
    }
    EXPECT_NEAR(paper.auxLoss, auxPaper, 1e-6);
    EXPECT_NEAR(hf.auxLoss, auxHf, 1e-6);
    o.expertCapacity = 1;  // HF's integer expert_capacity wins
    EXPECT_EQ(routed(logits, o).capacity, 1);
    EXPECT_EQ(routed(logits, o).dropped, 4);  // 0 keeps token 0; 1 keeps 3; 2 and 3 keep theirs
}

TEST(MoeRouter, TopKFirstChoicesClaimBeforeSecondChoicesAndTiesGoToTheLowerExpert) {
    // 3 tokens, 3 experts, k = 2: logits (2, 1, 0) for every token: all choose 0 then 1.
    PlainTensor logits = PlainTensor::fromF32({3, 3}, {2, 1, 0, 2, 1, 0, 2, 1, 0});
    RouterOptions o;
    o.policy = "topk";
    o.expertCapacity = 2;
    const Routing r = routed(logits, o);
    EXPECT_EQ(r.k, 2);
    EXPECT_EQ(r.expert, (std::vector<std::int64_t>{0, 1, 0, 1, 0, 1}));
    // expert 0: tokens 0, 1 then 2 (dropped); expert 1: all first choices came first, then 0, 1 (2 dropped)
    EXPECT_EQ(r.position, (std::vector<std::int64_t>{1, 1, 2, 2, 3, 3}));
    EXPECT_EQ(r.kept, (std::vector<std::uint8_t>{1, 1, 1, 1, 0, 0}));
    // normalize: the two gates sum to 1
    o.normalize = true;
    const Routing n = routed(logits, o);
    EXPECT_NEAR(n.gate[0] + n.gate[1], 1.0, 1e-6);
    EXPECT_NEAR(n.gate[0], std::exp(2.0) / (std::exp(2.0) + std::exp(1.0)), 1e-6);
    // ties: equal logits choose the lower expert first; k = E takes every expert
    PlainTensor tied = PlainTensor::fromF32({1, 3}, {1, 1, 1});
    o.k = 3;
    o.expertCapacity = 0;
    o.capacityFactor = 0;
    EXPECT_EQ(routed(tied, o).expert, (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(MoeRouter, GroupsHaveTheirOwnCapacity) {
    // 8 tokens all choosing expert 0, groups of 4, capacity 1 per group: tokens 0 and 4 kept.
    const PlainTensor logits = logitsChoosing({0, 0, 0, 0, 0, 0, 0, 0}, std::vector<float>(8, 1.0f), 2);
    RouterOptions o;
    o.groupSize = 4;
    o.expertCapacity = 1;
    const Routing r = routed(logits, o);
    EXPECT_EQ(r.groups, 2);
    EXPECT_EQ(r.kept, (std::vector<std::uint8_t>{1, 0, 0, 0, 1, 0, 0, 0}));
    EXPECT_EQ(r.position, (std::vector<std::int64_t>{1, 2, 3, 4, 1, 2, 3, 4}));
}

TEST(MoeRouter, LossesFollowTheirDefinitions) {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    const std::int64_t n = 12, E = 5;
    std::vector<float> values(n * E);
    for (auto& v : values) v = normal(rng);
    const PlainTensor logits = PlainTensor::fromF32({n, E}, values);
    for (const char* policy : {"switch", "topk"}) {
        RouterOptions o;
        o.policy = policy;
        o.groupSize = 6;
        const Routing r = routed(logits, o);
        // aux = mean over groups of E · Σ_e f_e P_e; z = mean over tokens of logsumexp²
        double aux = 0, z = 0;
        for (std::int64_t g = 0; g < 2; ++g) {
            double sum = 0;
            for (std::int64_t e = 0; e < E; ++e) {
                double f = 0, p = 0;
                for (std::int64_t t = g * 6; t < g * 6 + 6; ++t) {
                    double total = 0;
                    for (std::int64_t j = 0; j < E; ++j) total += std::exp(double(values[t * E + j]));
                    p += std::exp(double(values[t * E + e])) / total;
                    for (std::int64_t c = 0; c < r.k; ++c) f += r.expert[t * r.k + c] == e;
                }
                sum += (f / 6) * (p / 6);
            }
            aux += E * sum / 2;
        }
        for (std::int64_t t = 0; t < n; ++t) {
            double total = 0;
            for (std::int64_t j = 0; j < E; ++j) total += std::exp(double(values[t * E + j]));
            z += std::pow(std::log(total), 2.0) / n;
        }
        EXPECT_NEAR(r.auxLoss, aux, 1e-6) << policy;
        EXPECT_NEAR(r.zLoss, z, 1e-4) << policy;
    }
    // uniform probabilities: every token takes expert 0 (the tie rule), f = (1, 0, 0, 0), P = 1/4
    // each: aux = 4 · (1 · 1/4) = 1, the value of a perfectly balanced top-1 router too
    const Routing uniform = routed(PlainTensor::fromF32({4, 4}, std::vector<float>(16, 0.0f)), RouterOptions{});
    EXPECT_NEAR(uniform.auxLoss, 1.0, 1e-6);
    EXPECT_NEAR(uniform.zLoss, std::pow(std::log(4.0), 2.0), 1e-6);
}

TEST(MoeRouter, LogitsFromHiddenAndRouter) {
    const PlainTensor hidden = PlainTensor::fromF32({2, 3}, {1, 2, 3, 0, 1, 0});
    const PlainTensor router = PlainTensor::fromF32({2, 3}, {1, 0, 0, 0, 1, 1});
    auto l = routerLogits(hidden, router);
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(l->f32, (std::vector<float>{1, 5, 0, 1}));
    EXPECT_FALSE(routerLogits(hidden, PlainTensor::fromF32({1, 2}, {1, 1})).ok());
}

TEST(MoeRouter, BadInputNamesTheProblem) {
    const PlainTensor logits = PlainTensor::fromF32({2, 3}, {1, 2, 3, 4, 5, 6});
    const auto message = [&](RouterOptions o, const PlainTensor& l) {
        auto r = routeTokens(l, o);
        EXPECT_FALSE(r.ok());
        return r.ok() ? std::string() : r.error().message;
    };
    RouterOptions o;
    o.policy = "topk";
    o.k = 4;
    EXPECT_NE(message(o, logits).find("exceeds the 3 experts"), std::string::npos);
    o = RouterOptions{};
    o.k = 2;
    EXPECT_NE(message(o, logits).find("k = 1"), std::string::npos);
    o = RouterOptions{};
    o.capacityFactor = -1;
    EXPECT_NE(message(o, logits).find("capacity_factor"), std::string::npos);
    o = RouterOptions{};
    o.groupSize = 3;
    EXPECT_NE(message(o, PlainTensor::fromF32({4, 1}, {1, 1, 1, 1})).find("group_size"), std::string::npos);
    PlainTensor nan = logits;
    nan.f32[4] = std::nanf("");
    EXPECT_NE(message(RouterOptions{}, nan).find("token 1, expert 1"), std::string::npos);
    EXPECT_NE(message(RouterOptions{}, PlainTensor::zeros(DType::F32, {2, 0})).find("no experts"), std::string::npos);
}

// DeepSeek-V3's router, by hand: logits (0, 2, 1, −1) give σ = (0.5, 0.8808, 0.7311, 0.2689);
// the choice bias (0, 0, 0.3, 0.3) makes them (0.5, 0.8808, 1.0311, 0.5689). Two groups {0, 1},
// {2, 3} scored by their two best: 1.3808 against 1.6, so only group 1 competes: experts 2 and 3,
// gates their σ without the bias, renormalised (σ(1) + σ(−1) = 1) and times 2.5. Without the bias
// group 0 wins: experts 1 and 0, gates 0.8808 / 1.3808 and 0.5 / 1.3808, times 2.5.
TEST(MoeRouter, DeepSeekV3SigmoidScoresBiasAndGroupsByHand) {
    PlainTensor logits = PlainTensor::fromF32({1, 4}, {0.0f, 2.0f, 1.0f, -1.0f});
    RouterOptions o;
    o.policy = kTopkPolicy;
    o.k = 2;
    o.capacityFactor = 0;
    o.normalize = true;
    o.scoring = "sigmoid";
    o.choiceBias = {0.0f, 0.0f, 0.3f, 0.3f};
    o.expertGroups = 2;
    o.keptGroups = 1;
    o.groupScore = "top2";
    o.gateScale = 2.5;
    Routing r = routed(logits, o);
    EXPECT_NEAR(r.probs[1], 1 / (1 + std::exp(-2.0)), 1e-6);
    EXPECT_EQ(r.expert, (std::vector<std::int64_t>{2, 3}));
    EXPECT_NEAR(r.gate[0], 2.5 / (1 + std::exp(-1.0)), 1e-5);
    EXPECT_NEAR(r.gate[1], 2.5 / (1 + std::exp(1.0)), 1e-5);
    o.choiceBias.clear();
    r = routed(logits, o);
    EXPECT_EQ(r.expert, (std::vector<std::int64_t>{1, 0}));
    const double s1 = 1 / (1 + std::exp(-2.0)), s0 = 0.5;
    EXPECT_NEAR(r.gate[0], 2.5 * s1 / (s1 + s0), 1e-5);
    EXPECT_NEAR(r.gate[1], 2.5 * s0 / (s1 + s0), 1e-5);
}

// DeepSeek-V2's group-limited greedy: softmax (0.0871, 0.6439, 0.2369, 0.0321); groups scored by
// their best, 0.6439 against 0.2369: experts 1 and 0, gates the probabilities times the scale.
TEST(MoeRouter, DeepSeekV2GroupLimitedGreedyByHand) {
    PlainTensor logits = PlainTensor::fromF32({1, 4}, {0.0f, 2.0f, 1.0f, -1.0f});
    RouterOptions o;
    o.policy = kTopkPolicy;
    o.k = 2;
    o.capacityFactor = 0;
    o.expertGroups = 2;
    o.keptGroups = 1;
    o.gateScale = 1.5;
    const Routing r = routed(logits, o);
    const double sum = 1 + std::exp(2.0) + std::exp(1.0) + std::exp(-1.0);
    EXPECT_EQ(r.expert, (std::vector<std::int64_t>{1, 0}));
    EXPECT_NEAR(r.gate[0], 1.5 * std::exp(2.0) / sum, 1e-6);
    EXPECT_NEAR(r.gate[1], 1.5 / sum, 1e-6);
    // a kept group too small for k, and groups that do not divide the experts, are refused
    o.k = 3;
    auto refused = routeTokens(logits, o);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("exceeds the experts of the 1 groups kept"), std::string::npos) << refused.error().message;
    o.k = 2;
    o.expertGroups = 3;
    refused = routeTokens(logits, o);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("n_group 3 does not divide the 4 experts"), std::string::npos);
}
