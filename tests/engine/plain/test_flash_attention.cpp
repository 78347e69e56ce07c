// The flash-attention kernel (base/kernels/flash_attention.h), every body the CPU has (portable always,
// AVX2/FMA and AVX-512 where present), against softmax attention computed here in float64 from
// its definition: output, each row's shift and sum, and status — for head sizes that fill whole
// vectors and those that do not, key counts that split panels and blocks, causal with queries
// aligned to the last keys (and more queries than keys, whose first rows see nothing), padded
// keys and queries; and a hand-worked case.

#include "base/kernels/flash_attention.h"

#include <attnscope/kernel_path.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace attnscope::engine;

namespace {

struct Case {
    std::int64_t n, m, d;
    bool causal;
    bool padding;
};

struct Reference {
    std::vector<double> out, shift, sum;
    std::vector<int> status;
};

// softmax(scale · q kᵀ) v per row in float64 over the keys the row sees.
Reference reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, const Case& c,
                    const std::vector<std::uint8_t>& pad, float scale) {
    Reference r;
    r.out.assign(static_cast<std::size_t>(c.n * c.d), 0.0);
    r.shift.assign(static_cast<std::size_t>(c.n), -std::numeric_limits<double>::infinity());
    r.sum.assign(static_cast<std::size_t>(c.n), 0.0);
    r.status.assign(static_cast<std::size_t>(c.n), 0);
    for (std::int64_t i = 0; i < c.n; ++i) {
        if (!pad.empty() && c.n == c.m && pad[static_cast<std::size_t>(i)]) {
            r.status[static_cast<std::size_t>(i)] = 2;
            continue;
        }
        std::vector<double> s(static_cast<std::size_t>(c.m), -std::numeric_limits<double>::infinity());
        double high = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < c.m; ++j) {
            if (c.causal && j > i + c.m - c.n) continue;
            if (!pad.empty() && pad[static_cast<std::size_t>(j)]) continue;
            double dot = 0;
            for (std::int64_t t = 0; t < c.d; ++t)
                dot += static_cast<double>(q[static_cast<std::size_t>(i * c.d + t)]) * k[static_cast<std::size_t>(j * c.d + t)];
            s[static_cast<std::size_t>(j)] = scale * dot;
            high = std::max(high, s[static_cast<std::size_t>(j)]);
        }
        if (std::isinf(high)) {
            r.status[static_cast<std::size_t>(i)] = 1;
            continue;
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - high));
        for (std::int64_t j = 0; j < c.m; ++j)
            for (std::int64_t t = 0; t < c.d; ++t)
                r.out[static_cast<std::size_t>(i * c.d + t)] += s[static_cast<std::size_t>(j)] / sum * v[static_cast<std::size_t>(j * c.d + t)];
        r.shift[static_cast<std::size_t>(i)] = high;
        r.sum[static_cast<std::size_t>(i)] = sum;
    }
    return r;
}

std::vector<FlashIsa> bodiesHere() {
    std::vector<FlashIsa> bodies{FlashIsa::Portable};
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) bodies.push_back(FlashIsa::Avx2);
    if (__builtin_cpu_supports("avx512f")) bodies.push_back(FlashIsa::Avx512);
#endif
    return bodies;
}

void expectMatches(const Case& c, FlashIsa isa, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto draw = [&](std::int64_t count, float sd) {
        std::vector<float> x(static_cast<std::size_t>(count));
        for (float& e : x) e = sd * normal(rng);
        return x;
    };
    const std::vector<float> q = draw(c.n * c.d, 1.5f), k = draw(c.m * c.d, 1.5f), v = draw(c.m * c.d, 1.0f);
    std::vector<std::uint8_t> pad;
    if (c.padding) {
        pad.assign(static_cast<std::size_t>(c.m), 0);
        for (std::size_t j = 0; j < pad.size(); j += 7) pad[j] = 1;
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
    std::vector<float> out(static_cast<std::size_t>(c.n * c.d), 99.0f), shift(static_cast<std::size_t>(c.n)), sum(static_cast<std::size_t>(c.n));
    std::vector<std::uint8_t> status(static_cast<std::size_t>(c.n), 9);
    FlashHead h;
    h.q = q.data();
    h.k = k.data();
    h.v = v.data();
    h.out = out.data();
    h.rowShift = shift.data();
    h.rowSum = sum.data();
    h.status = status.data();
    h.n = c.n;
    h.m = c.m;
    h.d = c.d;
    h.scale = scale;
    h.causal = c.causal;
    h.keyPadding = pad.empty() ? nullptr : pad.data();
    h.padQueries = !pad.empty() && c.n == c.m;
    FlashScratch scratch;
    const std::int64_t empty = flashAttentionHead(h, scratch, isa);
    const Reference r = reference(q, k, v, c, pad, scale);
    const std::string where = std::string(flashIsaName(isa)) + " n=" + std::to_string(c.n) + " m=" + std::to_string(c.m) +
                              " d=" + std::to_string(c.d) + (c.causal ? " causal" : "") + (c.padding ? " padded" : "");
    std::int64_t expectedEmpty = 0;
    for (std::int64_t i = 0; i < c.n; ++i) {
        const auto at = static_cast<std::size_t>(i);
        ASSERT_EQ(status[at], r.status[at]) << where << " row " << i;
        expectedEmpty += r.status[at] == 1 ? 1 : 0;
        if (r.status[at] != 0) {
            EXPECT_TRUE(std::isinf(shift[at]) && shift[at] < 0) << where << " row " << i;
            EXPECT_EQ(sum[at], 0.0f) << where << " row " << i;
        } else {
            // the shift is the row's scaled max; with the sum it gives the row's log-sum-exp, from
            // which every weight is recomputed (a float shift's rounding moves the sum with it)
            EXPECT_NEAR(shift[at], r.shift[at], 1e-5 * (1 + std::abs(r.shift[at]))) << where << " row " << i;
            const double lse = shift[at] + std::log(static_cast<double>(sum[at])), expected = r.shift[at] + std::log(r.sum[at]);
            EXPECT_NEAR(lse, expected, 1e-5 * (1 + std::abs(expected))) << where << " row " << i;
        }
        for (std::int64_t t = 0; t < c.d; ++t)
            ASSERT_NEAR(out[static_cast<std::size_t>(i * c.d + t)], r.out[static_cast<std::size_t>(i * c.d + t)], 2e-5)
                << where << " row " << i << " column " << t;
    }
    EXPECT_EQ(empty, expectedEmpty) << where;
}

}  // namespace

TEST(FlashAttention, EveryBodyMatchesTheFloat64Definition) {
    const std::vector<Case> cases{
        {1, 1, 1, false, false},     {5, 9, 7, false, false},       {37, 300, 64, false, false}, {130, 520, 16, true, false},
        {300, 300, 64, true, false}, {260, 140, 80, true, false},   {140, 260, 3, true, false},  {129, 129, 32, false, true},
        {200, 200, 64, true, true},  {64, 600, 128, false, false},
    };
    for (FlashIsa isa : bodiesHere()) {
        std::uint32_t seed = 1;
        for (const Case& c : cases) expectMatches(c, isa, seed++);
    }
}

// Two keys, one query, d = 1, scale 1: scores 1·2 = 2 and 1·0 = 0, weights e²/(e²+1) and 1/(e²+1);
// values 3 and −1 give 3·0.880797 − 0.119203 = 2.523188; shift 2, sum 1 + e^−2 = 1.135335.
TEST(FlashAttention, AHandWorkedRow) {
    const float q[] = {1.0f}, k[] = {2.0f, 0.0f}, v[] = {3.0f, -1.0f};
    for (FlashIsa isa : bodiesHere()) {
        float out = 0, shift = 0, sum = 0;
        std::uint8_t status = 9;
        FlashHead h;
        h.q = q;
        h.k = k;
        h.v = v;
        h.out = &out;
        h.rowShift = &shift;
        h.rowSum = &sum;
        h.status = &status;
        h.n = 1;
        h.m = 2;
        h.d = 1;
        FlashScratch scratch;
        EXPECT_EQ(flashAttentionHead(h, scratch, isa), 0);
        EXPECT_NEAR(out, 2.523188f, 1e-6) << flashIsaName(isa);
        EXPECT_FLOAT_EQ(shift, 2.0f);
        EXPECT_NEAR(sum, 1.135335f, 1e-6);
        EXPECT_EQ(status, 0);
    }
}

// KernelPath picks the body: Portable always the portable one, Avx2 never AVX-512.
TEST(FlashAttention, TheKernelPathPicksTheBody) {
    setKernelPath(KernelPath::Portable);
    EXPECT_EQ(flashIsa(), FlashIsa::Portable);
    setKernelPath(KernelPath::Avx2);
    EXPECT_NE(flashIsa(), FlashIsa::Avx512);
    setKernelPath(KernelPath::Fastest);
    const std::vector<FlashIsa> here = bodiesHere();
    EXPECT_EQ(flashIsa(), here.back());
}
