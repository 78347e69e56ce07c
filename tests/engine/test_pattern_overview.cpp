// The pattern variants' overviews, pooled group by group (engine/src/attention/weights/
// pattern_overview.h), against the weights' own tiles pooled here in float64: inputs long enough
// that an overview spans several blocks of rows, key tiles and flushes of its staged weights;
// regions that cut groups and cells; factors that divide the stride (the residues' cell grid) and
// factors that do not; excluded and gathered keys (Longformer's globals), repeated blocks
// (BigBird's, pooled by row visits), padded keys; one thread and two; a stop.

#include "sparse_test_support.h"

#include <attnscope/weight_overview.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace {

using namespace sparse_test;

struct OverviewCase {
    std::string id;
    ParamValues params;
    std::int64_t n = 0, d = 16;
    bool padKeys = false;
};

std::vector<OverviewCase> overviewCases() {
    const auto ints = [](std::vector<std::int64_t> v) { return ParamValue{std::move(v)}; };
    return {
        {"sparse_strided", {{"stride", std::int64_t{40}}}, 2400},
        {"sparse_strided", {{"stride", std::int64_t{48}}, {"causal", false}}, 2000, 16, true},
        {"sparse_strided", {{"stride", std::int64_t{30}}, {"combine", std::string("interleave")}}, 1800, 12},
        {"longformer", {{"window", std::int64_t{60}}, {"global", ints({3, 700, 701, 1500})}}, 2100},
        {"longformer", {{"window", std::int64_t{20}}, {"dilation", ints({1, 3})}, {"causal", true}}, 1700, 16, true},
        {"bigbird", {{"block", std::int64_t{16}}, {"random", std::int64_t{3}}}, 1600},
        {"sparse_fixed", {{"block", std::int64_t{32}}, {"summary", std::int64_t{4}}}, 1500},
    };
}

std::string label(const OverviewCase& c) {
    std::string out = c.id;
    for (const auto& [name, value] : c.params) out += " " + name + "=" + formatParamValue(value);
    return out + (c.padKeys ? " padded" : "");
}

// The overview of `request` from the head's tile of the region, in float64.
struct Expected {
    std::vector<float> max;
    std::vector<double> sum;
    std::vector<ReasonBits> reasons;
    std::vector<std::uint8_t> zero;
    std::array<std::int64_t, kPatternReasonCount> entries{};
};

Expected pooledTile(const AttentionWeights& weights, const OverviewRequest& r, const WeightOverview& o) {
    const WeightTile t = weights.tile(r.head, r.r0, r.r1, r.c0, r.c1, true);
    Expected e;
    const std::size_t cells = o.maxWeight.size();
    e.max.assign(cells, 0.0f);
    e.sum.assign(cells, 0.0);
    e.reasons.assign(cells, 0);
    e.zero.assign(cells, 0);
    for (std::int64_t i = r.r0; i < r.r1; ++i)
        for (std::int64_t j = r.c0; j < r.c1; ++j) {
            const std::size_t at = static_cast<std::size_t>((i - r.r0) * t.cols() + (j - r.c0)), cell = o.cell(i, j);
            const ReasonBits bits = t.reasons[at];
            if (bits == 0) continue;
            e.max[cell] = std::max(e.max[cell], t.weights[at]);
            e.sum[cell] += t.weights[at];
            e.reasons[cell] |= bits;
            if (t.weights[at] == 0.0f) e.zero[cell] = 1;
            // a key counts once per reason, the listings beyond its reasons under its first
            int first = -1, counted = 0;
            for (int k = 0; k < kPatternReasonCount; ++k)
                if (bits & (1u << k)) {
                    if (first < 0) first = k;
                    ++e.entries[static_cast<std::size_t>(k)];
                    ++counted;
                }
            if (t.multiplicity[at] > counted) e.entries[static_cast<std::size_t>(first)] += t.multiplicity[at] - counted;
        }
    return e;
}

void expectPools(const WeightOverview& o, const Expected& e) {
    EXPECT_EQ(o.reasonEntries, e.entries);
    for (std::size_t cell = 0; cell < e.max.size(); ++cell) {
        // weights from the kept row statistics (the kernel's float sum): within a few parts per
        // million of the rows' own
        ASSERT_NEAR(o.maxWeight[cell], e.max[cell], 5e-6 * e.max[cell] + 1e-9) << "cell " << cell;
        ASSERT_NEAR(o.sumWeight[cell], e.sum[cell], 1e-5 * std::max(1.0, e.sum[cell])) << "cell " << cell;
        ASSERT_EQ(o.minWeight[cell], 0.0f) << "cell " << cell << ": keys outside the pattern count as 0";
        ASSERT_EQ(o.reasons[cell], e.reasons[cell]) << "cell " << cell;
        ASSERT_EQ(o.exactZero[cell], e.zero[cell]) << "cell " << cell;
    }
}

}  // namespace

TEST(PatternOverview, PoolsTheWeightsOfEveryRegionAndFactor) {
    auto engine = makeEngine();
    for (const OverviewCase& c : overviewCases()) {
        SCOPED_TRACE(label(c));
        const Qkv3 x = randomQkv(2, c.n, c.d, 71);
        RunRequest request = variantRequest(x, c.id, c.params);
        if (c.padKeys) {
            request.keyPadding.assign(static_cast<std::size_t>(c.n), 0);
            request.keyPadding[5] = request.keyPadding[static_cast<std::size_t>(c.n / 2)] = 1;
        }
        const auto run = runOk(*engine, request);
        ASSERT_TRUE(run);
        const AttentionResult& res = run->results[0];
        const std::int64_t n = c.n;
        const std::vector<OverviewRequest> regions = {
            {1, 0, n, 0, n, 20},                           // divides the strides
            {1, 0, n, 0, n, 7},                            // divides none
            {0, n / 5 + 3, n - n / 7, n / 9, n - 11, 5},   // cells and groups cut by the region
            {0, n / 3, n / 3 + 150, n / 4, n / 4 + 300, 1},
            {1, n / 2, n / 2 + 100, 700, 702, 1},          // narrower than a group's gathered keys
        };
        for (const OverviewRequest& r : regions) {
            SCOPED_TRACE("region rows " + std::to_string(r.r0) + ".." + std::to_string(r.r1) + " keys " +
                         std::to_string(r.c0) + ".." + std::to_string(r.c1) + " factor " + std::to_string(r.factor));
            ASSERT_TRUE(poolsByGroups(*res.weights, r.head));
            WeightOverview o;
            ASSERT_TRUE(buildOverview(*res.weights, r, o));
            expectPools(o, pooledTile(*res.weights, r, o));
        }
    }
}

TEST(PatternOverview, OneThreadAndTwoGiveTheSameBits) {
    auto engine = makeEngine();
    for (const OverviewCase& c : overviewCases()) {
        SCOPED_TRACE(label(c));
        const auto run = runOk(*engine, variantRequest(randomQkv(2, c.n, c.d, 72), c.id, c.params));
        ASSERT_TRUE(run);
        expectSameOverviewOnOneAndTwoThreads(*run->results[0].weights, OverviewRequest{1, 0, c.n, 0, c.n, 20});
    }
}

TEST(PatternOverview, AStopEndsIt) {
    auto engine = makeEngine();
    const OverviewCase c = overviewCases().front();
    const auto run = runOk(*engine, variantRequest(randomQkv(2, c.n, c.d, 73), c.id, c.params));
    ASSERT_TRUE(run);
    WeightOverview o;
    int polls = 0;
    EXPECT_FALSE(buildOverview(*run->results[0].weights, OverviewRequest{0, 0, c.n, 0, c.n, 3}, o, [&](double) {
        return ++polls < 2;
    }));
    EXPECT_EQ(polls, 2) << "stopped at the second poll";
}
