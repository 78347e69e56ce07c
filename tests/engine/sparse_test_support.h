#pragma once
// Helpers shared by the sparse-variant tests: an engine, random Q/K/V, the pattern as a
// character grid, and an independent double-precision masked softmax to compare weights with.

#include <attnscope/engine.h>
#include <attnscope/weight_overview.h>

#include <gtest/gtest.h>

#include "../support/weights_support.h"
#include "base/runtime/worker_threads.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace sparse_test {

using namespace attnscope::engine;
using test_support::allowed;
using test_support::denseWeights;

inline std::unique_ptr<Engine> makeEngine() {
    EngineOptions options;
    options.threads = 1;
    auto engine = Engine::create(options);
    EXPECT_TRUE(engine.ok());
    return std::move(engine.value());
}

inline PlainTensor randomTensor(std::int64_t h, std::int64_t n, std::int64_t d, unsigned seed, float sigma = 1.5f) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, sigma);
    std::vector<float> values(static_cast<std::size_t>(h * n * d));
    for (auto& x : values) x = dist(gen);
    return PlainTensor::fromF32({h, n, d}, values);
}

struct Qkv3 {
    PlainTensor q, k, v;
};
inline Qkv3 randomQkv(std::int64_t h, std::int64_t n, std::int64_t d, unsigned seed) {
    return {randomTensor(h, n, d, seed), randomTensor(h, n, d, seed + 1), randomTensor(h, n, d, seed + 2)};
}

inline RunRequest variantRequest(const Qkv3& x, const std::string& id, const ParamValues& params) {
    RunRequest request;
    request.source = QkvTensors{x.q, x.k, x.v};
    request.variants.push_back(VariantRequest{id, params});
    return request;
}

inline std::shared_ptr<const RunResult> runOk(Engine& engine, const RunRequest& request) {
    auto result = engine.run(request);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    if (!result.ok()) return nullptr;
    return *result;
}

inline char reasonChar(std::uint8_t reason) {
    switch (static_cast<PatternReason>(reason)) {
    case PatternReason::Local: return 'L';
    case PatternReason::Dilated: return 'D';
    case PatternReason::Stride: return 'S';
    case PatternReason::Summary: return 'C';
    case PatternReason::Global: return 'G';
    case PatternReason::Random: return 'R';
    case PatternReason::Ring: return 'O';
    case PatternReason::Relay: return 'Y';
    case PatternReason::TopK: return 'K';
    case PatternReason::Support: return 'P';
    case PatternReason::Memory: return 'M';
    case PatternReason::Causal: return 'c';
    default: return '?';
    }
}

/// The pattern of one head as rows of characters: '.' not allowed, the reason letter, or the
/// number of times a key is listed when it is listed more than once. Read from the result's
/// weights (tiles with reasons); a key with several reasons shows the lowest-numbered one.
inline std::vector<std::string> maskGrid(const AttentionResult& r, int head) {
    const WeightTile t = r.weights->tile(head, 0, r.n, 0, r.m, /*withReasons=*/true);
    std::vector<std::string> grid(static_cast<std::size_t>(r.n), std::string(static_cast<std::size_t>(r.m), '.'));
    for (std::int64_t i = 0; i < r.n; ++i)
        for (std::int64_t j = 0; j < r.m; ++j) {
            const std::size_t cell = static_cast<std::size_t>(i * r.m + j);
            const int mult = t.multiplicity[cell];
            if (mult == 0) continue;
            if (mult > 1) {
                grid[i][j] = static_cast<char>('0' + std::min(mult, 9));
                continue;
            }
            int reason = 0;
            while (reason < kPatternReasonCount && !(t.reasons[cell] & (1u << reason))) ++reason;
            grid[i][j] = reasonChar(static_cast<std::uint8_t>(reason));
        }
    return grid;
}

/// Multiplicity of (head, i, j) in the pattern (0 = not allowed).
inline std::vector<int> multiplicity(const AttentionResult& r, int head) {
    const WeightTile t = r.weights->tile(head, 0, r.n, 0, r.m, /*withReasons=*/true);
    return std::vector<int>(t.multiplicity.begin(), t.multiplicity.end());
}

/// Independent reference: for every head, softmax over the allowed keys with multiplicities
/// (a key allowed c times has weight c·exp(s)/Z), in double precision from q, k, v directly;
/// checks weights (1e-6), output (1e-5) and that non-empty rows sum to 1.
inline void expectMatchesMaskedSoftmax(const AttentionResult& r, const PlainTensor& q, const PlainTensor& k,
                                       const PlainTensor& v, const std::function<std::vector<int>(int)>& multFn = {}) {
    const std::int64_t heads = q.shape[0], n = q.shape[1], d = q.shape[2], m = k.shape[1];
    ASSERT_EQ(r.n, n);
    double maxW = 0, maxO = 0;
    const std::vector<float> weights = denseWeights(r);
    for (int h = 0; h < heads; ++h) {
        const std::vector<int> mult = multFn ? multFn(h) : multiplicity(r, h);
        for (std::int64_t i = 0; i < n; ++i) {
            std::vector<double> s(static_cast<std::size_t>(m), 0.0);
            double mx = -INFINITY;
            for (std::int64_t j = 0; j < m; ++j) {
                if (!mult[i * m + j]) continue;
                double dot = 0;
                for (std::int64_t c = 0; c < d; ++c)
                    dot += double(q.f32[(h * n + i) * d + c]) * double(k.f32[(h * m + j) * d + c]);
                s[j] = dot / std::sqrt(double(d));
                mx = std::max(mx, s[j]);
            }
            double z = 0;
            for (std::int64_t j = 0; j < m; ++j)
                if (mult[i * m + j]) z += mult[i * m + j] * std::exp(s[j] - mx);
            double rowSum = 0;
            std::vector<double> out(static_cast<std::size_t>(d), 0.0);
            for (std::int64_t j = 0; j < m; ++j) {
                const double w = mult[i * m + j] ? mult[i * m + j] * std::exp(s[j] - mx) / z : 0.0;
                const double got = weights[static_cast<std::size_t>((h * n + i) * m + j)];
                maxW = std::max(maxW, std::abs(got - w));
                rowSum += got;
                for (std::int64_t c = 0; c < d; ++c) out[c] += w * v.f32[(h * m + j) * d + c];
            }
            if (z > 0) {
                EXPECT_NEAR(rowSum, 1.0, 1e-5) << "head " << h << " row " << i;
            }
            for (std::int64_t c = 0; c < d; ++c)
                maxO = std::max(maxO, std::abs(out[c] - r.output[static_cast<std::size_t>((h * n + i) * d + c)]));
        }
    }
    EXPECT_LT(maxW, 1e-6);
    EXPECT_LT(maxO, 1e-5);
}

/// Every entry of the pattern (all heads) matches allowed(h, i, j) exactly.
inline void expectPatternEquals(const AttentionResult& r, const std::function<bool(int, std::int64_t, std::int64_t)>& allowed) {
    for (int h = 0; h < r.heads; ++h) {
        const auto mult = multiplicity(r, h);
        for (std::int64_t i = 0; i < r.n; ++i)
            for (std::int64_t j = 0; j < r.m; ++j)
                ASSERT_EQ(mult[i * r.m + j] > 0, allowed(h, i, j)) << "head " << h << " query " << i << " key " << j;
    }
}

inline std::string errorOf(Engine& engine, const RunRequest& request) {
    auto result = engine.run(request);
    EXPECT_FALSE(result.ok());
    if (result.ok()) return {};
    EXPECT_EQ(result.error().code, ErrorCode::InvalidArgument) << result.error().message;
    EXPECT_EQ(result.error().message.find('\n'), std::string::npos) << "one-line error";
    return result.error().message;
}

// An overview is pooled in blocks of whole cell rows that depend on its region alone: one thread
// and two give the same cells and counts, to the bit.
inline void expectSameOverviewOnOneAndTwoThreads(const AttentionWeights& weights, const OverviewRequest& request) {
    WeightOverview alone, pair;
    {
        const KernelThreadsScope one(1);
        ASSERT_TRUE(buildOverview(weights, request, alone));
    }
    {
        const KernelThreadsScope two(2);
        ASSERT_TRUE(buildOverview(weights, request, pair));
    }
    EXPECT_EQ(pair.maxWeight, alone.maxWeight);
    EXPECT_EQ(pair.sumWeight, alone.sumWeight);
    EXPECT_EQ(pair.reasons, alone.reasons);
    EXPECT_EQ(pair.exactZero, alone.exactZero);
    EXPECT_EQ(pair.reasonEntries, alone.reasonEntries);
}

}  // namespace sparse_test
