// `reformer`: buckets from the stored rotations, the sorted order and chunk windows rebuilt here
// from the stored buckets, and the output/weights against a double-precision softmax over the
// candidate multiset (duplicates counted), VARIANTS.md §6.

#include "sparse_test_support.h"

#include <algorithm>
#include <map>

using namespace sparse_test;

namespace {

struct LshParams {
    std::int64_t buckets = 4, hashes = 2, chunkLen = 4, before = 1, after = 0;
    bool causal = false, across = true, duplicates = true;

    ParamValues values() const {
        return {{"n_buckets", buckets},       {"n_hashes", hashes}, {"chunk_len", chunkLen},
                {"n_chunks_before", before}, {"n_chunks_after", after}, {"causal", causal},
                {"attend_across_buckets", across}, {"allow_duplicate_attention", duplicates}};
    }
};

/// Candidate occurrences (key, score) of every query of head h, rebuilt from the stored buckets:
/// sort by (bucket, position) per round, pad each round to a multiple of chunk_len, chunk the
/// whole list, window c - before .. c + after wrapping, masks padding, causal, self (-5e4),
/// other global bucket; with duplicates disallowed, score - log(count).
std::vector<std::vector<std::pair<std::int64_t, double>>> candidates(const AttentionResult& r, const PlainTensor& q, int h,
                                                                     const LshParams& p,
                                                                     const std::vector<std::uint8_t>& pad = {}) {
    const std::int64_t n = q.shape[1], d = q.shape[2];
    const std::int64_t nPad = (n + p.chunkLen - 1) / p.chunkLen * p.chunkLen;
    const auto& buckets = r.diagnostics.at("buckets");
    std::vector<std::int64_t> token, global;
    for (std::int64_t round = 0; round < p.hashes; ++round) {
        std::vector<std::pair<std::int64_t, std::int64_t>> keyed;
        for (std::int64_t t = 0; t < n; ++t)
            keyed.emplace_back(buckets.i64[static_cast<std::size_t>((h * p.hashes + round) * n + t)], t);
        std::sort(keyed.begin(), keyed.end());
        for (const auto& [b, t] : keyed) {
            token.push_back(t);
            global.push_back(b + round * p.buckets);
        }
        for (std::int64_t t = n; t < nPad; ++t) {
            token.push_back(-1);
            global.push_back(-1);
        }
    }
    const auto& sorted = r.diagnostics.at("sorted");
    for (std::size_t s = 0; s < token.size(); ++s)
        EXPECT_EQ(sorted.i64[static_cast<std::size_t>(h) * token.size() + s], token[s]) << "sorted slot " << s;
    auto dot = [&](std::int64_t i, std::int64_t j) {
        double qk = 0, norm = 0;
        for (std::int64_t c = 0; c < d; ++c) {
            const double kj = q.f32[static_cast<std::size_t>((h * n + j) * d + c)];
            qk += double(q.f32[static_cast<std::size_t>((h * n + i) * d + c)]) * kj;
            norm += kj * kj;
        }
        return qk / std::max(std::sqrt(norm), 1e-12) / std::sqrt(double(d));
    };
    const auto isPad = [&](std::int64_t t) { return !pad.empty() && pad[static_cast<std::size_t>(t)]; };
    const std::int64_t chunks = static_cast<std::int64_t>(token.size()) / p.chunkLen;
    std::vector<std::vector<std::pair<std::int64_t, double>>> out(static_cast<std::size_t>(n));
    for (std::int64_t slot = 0; slot < static_cast<std::int64_t>(token.size()); ++slot) {
        const std::int64_t i = token[static_cast<std::size_t>(slot)];
        if (i < 0 || isPad(i)) continue;
        const std::int64_t c = slot / p.chunkLen;
        for (std::int64_t o = -p.before; o <= p.after; ++o) {
            const std::int64_t wc = ((c + o) % chunks + chunks) % chunks;
            for (std::int64_t ks = wc * p.chunkLen; ks < (wc + 1) * p.chunkLen; ++ks) {
                const std::int64_t j = token[static_cast<std::size_t>(ks)];
                if (j < 0 || isPad(j) || (p.causal && i < j) ) continue;
                if (!p.across && global[static_cast<std::size_t>(ks)] != global[static_cast<std::size_t>(slot)]) continue;
                out[static_cast<std::size_t>(i)].emplace_back(j, j == i ? -5e4 : dot(i, j));
            }
        }
    }
    if (!p.duplicates)
        for (auto& row : out) {
            std::map<std::int64_t, int> count;
            for (const auto& [j, sc] : row) ++count[j];
            for (auto& [j, sc] : row) sc -= std::log(double(count[j]));
        }
    return out;
}

/// Weights (1e-6), rows summing to 1, multiplicities (exact) and output (1e-5) against the union softmax.
void expectMatchesReference(const AttentionResult& r, const Qkv3& x, const LshParams& p,
                            const std::vector<std::uint8_t>& pad = {}) {
    const std::int64_t heads = x.q.shape[0], n = x.q.shape[1], d = x.q.shape[2];
    double maxW = 0, maxO = 0;
    for (int h = 0; h < heads; ++h) {
        const auto cand = candidates(r, x.q, h, p, pad);
        const auto mult = multiplicity(r, h);
        for (std::int64_t i = 0; i < n; ++i) {
            const auto& row = cand[static_cast<std::size_t>(i)];
            std::vector<double> w(static_cast<std::size_t>(n), 0.0);
            std::vector<int> count(static_cast<std::size_t>(n), 0);
            double mx = -1e300, z = 0;
            for (const auto& [j, sc] : row) mx = std::max(mx, sc);
            for (const auto& [j, sc] : row) z += std::exp(sc - mx);
            for (const auto& [j, sc] : row) {
                w[static_cast<std::size_t>(j)] += std::exp(sc - mx) / z;
                ++count[static_cast<std::size_t>(j)];
            }
            double rowSum = 0;
            for (std::int64_t j = 0; j < n; ++j) {
                ASSERT_EQ(mult[static_cast<std::size_t>(i * n + j)], count[static_cast<std::size_t>(j)])
                    << "head " << h << " query " << i << " key " << j;
                const double got = r.weightAt(h, i, j);
                rowSum += got;
                maxW = std::max(maxW, std::abs(got - w[static_cast<std::size_t>(j)]));
            }
            if (!row.empty()) {
                EXPECT_NEAR(rowSum, 1.0, 1e-5) << "head " << h << " row " << i;
            }
            for (std::int64_t c = 0; c < d; ++c) {
                double o = 0;
                for (std::int64_t j = 0; j < n; ++j) o += w[static_cast<std::size_t>(j)] * x.v.f32[static_cast<std::size_t>((h * n + j) * d + c)];
                maxO = std::max(maxO, std::abs(o - r.output[static_cast<std::size_t>((h * n + i) * d + c)]));
            }
        }
    }
    EXPECT_LT(maxW, 1e-6);
    EXPECT_LT(maxO, 1e-5);
}

}  // namespace

TEST(ReformerAttention, BucketsAreTheArgmaxOfTheStoredRotations) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 32, 8, 201);
    LshParams p;
    p.buckets = 8;
    p.hashes = 3;
    auto r = runOk(*engine, variantRequest(x, "reformer", p.values()));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    const auto& rot = res.diagnostics.at("rotations");
    const auto& buckets = res.diagnostics.at("buckets");
    ASSERT_EQ(rot.shape, (std::vector<std::int64_t>{2, 8, 3, 4}));
    ASSERT_EQ(buckets.shape, (std::vector<std::int64_t>{2, 3, 32}));
    int checked = 0;
    for (int h = 0; h < 2; ++h)
        for (int round = 0; round < 3; ++round)
            for (int t = 0; t < 32; ++t) {
                std::vector<double> xr(8, 0.0);
                for (int i = 0; i < 4; ++i) {
                    for (int c = 0; c < 8; ++c)
                        xr[static_cast<std::size_t>(i)] += double(x.q.f32[static_cast<std::size_t>((h * 32 + t) * 8 + c)]) *
                                                           rot.f32[static_cast<std::size_t>(((h * 8 + c) * 3 + round) * 4 + i)];
                    xr[static_cast<std::size_t>(i + 4)] = -xr[static_cast<std::size_t>(i)];
                }
                const auto best = std::max_element(xr.begin(), xr.end()) - xr.begin();
                std::vector<double> sortedXr = xr;
                std::sort(sortedXr.rbegin(), sortedXr.rend());
                if (sortedXr[0] - sortedXr[1] < 1e-4) continue;  // a float near-tie may go either way
                EXPECT_EQ(buckets.i64[static_cast<std::size_t>((h * 3 + round) * 32 + t)], best);
                ++checked;
            }
    EXPECT_GT(checked, 150);
    // Same seed, same draws; another seed, other rotations.
    auto again = runOk(*engine, variantRequest(x, "reformer", p.values()));
    EXPECT_EQ(again->results[0].diagnostics.at("rotations").f32, rot.f32);
    for (std::size_t i = 0; i < 2 * 32 * 8; ++i) EXPECT_EQ(again->results[0].output[i], res.output[i]);
    auto request = variantRequest(x, "reformer", p.values());
    request.projection.seed = 7;
    auto other = runOk(*engine, request);
    EXPECT_NE(other->results[0].diagnostics.at("rotations").f32, rot.f32);
}

TEST(ReformerAttention, OutputIsTheUnionSoftmaxOverTheRebuiltCandidates) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 24, 8, 211);
    for (std::int64_t before : {0, 1, 2})
        for (std::int64_t after : {0, 1}) {
            LshParams p;
            p.buckets = 6;
            p.hashes = 3;
            p.chunkLen = 4;
            p.before = before;
            p.after = after;
            auto r = runOk(*engine, variantRequest(x, "reformer", p.values()));
            ASSERT_TRUE(r);
            SCOPED_TRACE("before " + std::to_string(before) + " after " + std::to_string(after));
            expectMatchesReference(r->results[0], x, p);
            // round weights: a distribution over rounds per query
            const auto& rw = r->results[0].diagnostics.at("round_weights");
            for (int i = 0; i < 24; ++i)
                EXPECT_NEAR(rw.f32[static_cast<std::size_t>(i)] + rw.f32[static_cast<std::size_t>(24 + i)] +
                                rw.f32[static_cast<std::size_t>(48 + i)], 1.0, 1e-5);
        }
}

TEST(ReformerAttention, StrictBucketsCausalAndNoDuplicates) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 16, 4, 221);
    for (int mode = 0; mode < 4; ++mode) {
        LshParams p;
        p.buckets = 4;
        p.hashes = 4;
        p.chunkLen = 4;
        p.after = 1;
        p.across = mode != 1;
        p.causal = mode == 2;
        p.duplicates = mode != 3;
        auto r = runOk(*engine, variantRequest(x, "reformer", p.values()));
        ASSERT_TRUE(r);
        SCOPED_TRACE("mode " + std::to_string(mode));
        expectMatchesReference(r->results[0], x, p);
        for (int h = 0; h < 2; ++h)
            r->results[0].weights->forEachRow(h, 0, 16, [&](const RowEntries& row) {
                for (std::int64_t t = 0; t < row.count; ++t) {
                    if (p.causal) {
                        EXPECT_LE(row.keys[t], row.query) << "future key";
                    }
                    if (!p.across) {
                        EXPECT_EQ(row.reasons[t], 1u << unsigned(PatternReason::Bucket));
                    }
                }
                return true;
            });
    }
}

TEST(ReformerAttention, OneRoundOneChunkIsFullAttentionWithSelfAtMinus5e4) {
    auto engine = makeEngine();
    // q = (1,0), (0,1), (1,1); keys q/|q|; scale 1/sqrt(2).
    // Query 0: key 1 score 0, key 2 score 0.5 -> 1/(1+e^0.5) = 0.3775407, 0.6224593; self ~ 0.
    // Query 2: keys 0 and 1 both 1/sqrt(2) -> 0.5 each.
    Qkv3 x{PlainTensor::fromF32({1, 3, 2}, {1, 0, 0, 1, 1, 1}), PlainTensor::fromF32({1, 3, 2}, {9, 9, 9, 9, 9, 9}),
           PlainTensor::fromF32({1, 3, 2}, {1, 0, 0, 1, 2, 2})};
    LshParams p;
    p.buckets = 2;
    p.hashes = 1;
    p.chunkLen = 3;
    p.before = 0;
    auto r = runOk(*engine, variantRequest(x, "reformer", p.values()));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    const auto mult = multiplicity(res, 0);
    for (int v : mult) EXPECT_EQ(v, 1);
    const double a = 1.0 / (1.0 + std::exp(0.5)), b = 1.0 - a;
    const double expected[3][3] = {{0, a, b}, {a, 0, b}, {0.5, 0.5, 0}};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(res.weightAt(0, i, j), expected[i][j], 1e-6) << i << "," << j;
    const double out[3][2] = {{2 * b, a + 2 * b}, {a + 2 * b, 2 * b}, {0.5, 0.5}};
    for (int i = 0; i < 3; ++i)
        for (int c = 0; c < 2; ++c) EXPECT_NEAR(res.output[static_cast<std::size_t>(i * 2 + c)], out[i][c], 1e-6);
    // n_chunks_before = 1: the single chunk is its own previous chunk, every key listed twice,
    // the same weights once the copies are summed.
    p.before = 1;
    auto twice = runOk(*engine, variantRequest(x, "reformer", p.values()));
    ASSERT_TRUE(twice);
    for (int v : multiplicity(twice->results[0], 0)) EXPECT_EQ(v, 2);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_NEAR(twice->results[0].weightAt(0, i, j), expected[i][j], 1e-6);
    // A lone token attends only itself: the finite self value, not an empty row.
    Qkv3 one{PlainTensor::fromF32({1, 1, 2}, {1, 2}), PlainTensor::fromF32({1, 1, 2}, {0, 0}),
             PlainTensor::fromF32({1, 1, 2}, {3, 4})};
    p.chunkLen = 1;
    auto single = runOk(*engine, variantRequest(one, "reformer", p.values()));
    ASSERT_TRUE(single);
    EXPECT_NEAR(single->results[0].weightAt(0, 0, 0), 1.0, 1e-6);
    EXPECT_NEAR(single->results[0].output[1], 4.0, 1e-6);
}

TEST(ReformerAttention, PaddingToChunkLenAndKeyPadding) {
    auto engine = makeEngine();
    const auto x = randomQkv(2, 10, 4, 231);
    LshParams p;
    p.buckets = 4;
    p.hashes = 2;
    p.chunkLen = 4;
    auto r = runOk(*engine, variantRequest(x, "reformer", p.values()));
    ASSERT_TRUE(r);
    ASSERT_FALSE(r->warnings.empty());
    EXPECT_NE(r->warnings[0].find("not a multiple of chunk_len = 4"), std::string::npos) << r->warnings[0];
    EXPECT_EQ(r->results[0].diagnostics.at("sorted").shape, (std::vector<std::int64_t>{2, 2, 12}));
    expectMatchesReference(r->results[0], x, p);

    auto request = variantRequest(x, "reformer", p.values());
    request.keyPadding = {0, 0, 1, 0, 0, 0, 0, 1, 0, 0};
    auto padded = runOk(*engine, request);
    ASSERT_TRUE(padded);
    const auto& res = padded->results[0];
    expectMatchesReference(res, x, p, request.keyPadding);
    ASSERT_EQ(res.rowStatus.shape, (std::vector<std::int64_t>{2, 10}));
    EXPECT_EQ(res.rowStatus.u8[2], 2);
    EXPECT_EQ(res.rowStatus.u8[17], 2);
    for (int c = 0; c < 4; ++c) EXPECT_EQ(res.output[static_cast<std::size_t>(2 * 4 + c)], 0.0f);
}

// Nothing of size n x window is kept: the row statistics are [heads, n], the draws O(n·hashes).
TEST(ReformerAttention, KeepsNoListingOnlyRowStatisticsAndDraws) {
    auto engine = makeEngine();
    const auto x = randomQkv(3, 32, 8, 241);
    LshParams p;
    p.buckets = 8;
    p.hashes = 4;
    p.chunkLen = 8;
    auto r = runOk(*engine, variantRequest(x, "reformer", p.values()));
    ASSERT_TRUE(r);
    const auto& res = r->results[0];
    EXPECT_EQ(res.stats.at("row_max").shape, (std::vector<std::int64_t>{3, 32}));
    EXPECT_EQ(res.stats.at("row_sum").shape, (std::vector<std::int64_t>{3, 32}));
    EXPECT_EQ(res.diagnostics.at("sorted").shape, (std::vector<std::int64_t>{3, 4, 32}));
    EXPECT_EQ(res.diagnostics.count("pattern_listed"), 0u);
    expectMatchesReference(res, x, p);
}

TEST(ReformerAttention, BadParametersAreOneLineErrors) {
    auto engine = makeEngine();
    const auto x = randomQkv(1, 8, 4, 251);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "reformer", {{"n_buckets", std::int64_t{5}}})).find("n_buckets must be even"),
              std::string::npos);
    EXPECT_FALSE(errorOf(*engine, variantRequest(x, "reformer", {{"chunk_len", std::int64_t{0}}})).empty());
    EXPECT_FALSE(errorOf(*engine, variantRequest(x, "reformer", {{"n_hashes", std::int64_t{0}}})).empty());
    // Cross attention (m != n) is refused: keys are the normalised queries.
    auto request = variantRequest(x, "reformer", {});
    std::get<QkvTensors>(request.source).k = randomTensor(1, 6, 4, 3);
    std::get<QkvTensors>(request.source).v = randomTensor(1, 6, 4, 4);
    EXPECT_NE(errorOf(*engine, request).find("self-attention"), std::string::npos);
    // chunk_len above n is clamped with a notice; the default n_buckets is n / chunk_len rounded up to even, at least 2.
    auto r = runOk(*engine, variantRequest(x, "reformer", {}));
    ASSERT_TRUE(r);
    EXPECT_NE(r->warnings[0].find("using chunk_len = 8"), std::string::npos);
    EXPECT_EQ(std::get<std::int64_t>(r->results[0].params.at("n_buckets")), 2);
}
