// Exact weights on demand: for every variant and its parameter corners, any tile (random
// rectangles, whole rows, edge rows and columns) gives the cells of the whole-head tile, row visits
// list exactly its allowed cells, overviews pool it, a result file read back gives the same tiles,
// and a tile outside the result is refused. The values themselves are checked against independent
// float64 computations in each variant's own test file.

#include "sparse_test_support.h"

#include <attnscope/result_file.h>
#include <attnscope/weight_overview.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>

namespace {

using namespace sparse_test;

struct TileCase {
    std::string id;
    ParamValues params;
    std::int64_t n = 40;
    bool padKeys = false;
    /// BLAS-scored variants (entmax, linear, performer, linformer): a cell may differ in its last
    /// bits between tile shapes; the others compute every cell with one routine.
    float tolerance = 0.0f;
};

std::vector<TileCase> tileCases() {
    const auto ints = [](std::vector<std::int64_t> v) { return ParamValue{std::move(v)}; };
    return {
        {"full", {}, 37},
        {"full", {{"causal", true}}, 37, true},
        {"sparse_strided", {{"stride", std::int64_t{6}}}, 40},
        {"sparse_strided", {{"stride", std::int64_t{5}}, {"causal", false}}, 41, true},
        {"sparse_strided", {{"stride", std::int64_t{4}}, {"combine", std::string("interleave")}}, 33},
        {"sparse_strided", {{"stride", std::int64_t{1}}, {"causal", false}}, 17},
        {"sparse_fixed", {{"block", std::int64_t{8}}, {"summary", std::int64_t{2}}}, 37},
        {"sparse_fixed", {{"block", std::int64_t{8}}, {"summary", std::int64_t{3}}, {"causal", false}, {"summary_offsets", ints({0, 5, 2})}}, 37},
        {"longformer", {{"window", std::int64_t{3}}}, 37},
        {"longformer", {{"window", std::int64_t{2}}, {"dilation", ints({1, 2, 3})}, {"global", ints({0, 9, 30})}, {"causal", true}}, 37, true},
        {"longformer", {{"window", std::int64_t{4}}, {"global", ints({5, 6})}}, 40},
        {"bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{2}}}, 40},
        {"bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{2}}, {"count_duplicates", false}}, 40},
        {"bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{1}}, {"form", std::string("etc")}, {"extra_global", std::int64_t{3}}}, 39},
        {"bigbird", {{"block", std::int64_t{4}}, {"random", std::int64_t{1}}, {"pad", true}}, 37, true},
        {"star", {}, 23},
        {"star", {{"cyclic", true}}, 23, true},
        {"topk", {{"k", std::int64_t{5}}}, 30},
        {"topk", {{"k", std::int64_t{3}}, {"causal", true}, {"ties", std::string("index")}}, 30, true},
        {"entmax", {{"alpha", std::vector<double>{1.5, 2.0, 1.3}}}, 30, false, 1e-6f},
        {"entmax", {{"alpha", std::vector<double>{1.0}}, {"causal", true}}, 30, true, 1e-6f},
        {"linear", {}, 30, false, 1e-6f},
        {"linear", {{"causal", true}}, 30, true, 1e-6f},
        {"performer", {{"nb_features", std::int64_t{16}}}, 30, false, 1e-6f},
        {"performer", {{"nb_features", std::int64_t{12}}, {"causal", true}, {"kernel", std::string("relu")}}, 30, true, 1e-6f},
        {"linformer", {{"k", std::int64_t{6}}}, 30, false, 1e-6f},
        {"linformer", {{"k", std::int64_t{5}}, {"sharing", std::string("none")}}, 30, true, 1e-6f},
        {"reformer", {{"n_buckets", std::int64_t{4}}, {"n_hashes", std::int64_t{3}}, {"chunk_len", std::int64_t{5}}}, 32},
        {"reformer", {{"n_buckets", std::int64_t{4}}, {"n_hashes", std::int64_t{2}}, {"chunk_len", std::int64_t{6}},
                      {"n_chunks_after", std::int64_t{1}}, {"causal", true}, {"allow_duplicate_attention", false},
                      {"attend_across_buckets", false}},
         31, true},
        {"routing", {{"clusters", std::int64_t{4}}, {"window_size", std::int64_t{9}}}, 30},
        {"routing", {{"clusters", std::int64_t{3}}, {"mode", std::string("argmax")}, {"causal", true}}, 30, true},
    };
}

std::shared_ptr<const RunResult> runCase(Engine& engine, const TileCase& c, const Qkv3& x) {
    RunRequest request = variantRequest(x, c.id, c.params);
    if (c.padKeys) {
        request.keyPadding.assign(static_cast<std::size_t>(c.n), 0);
        request.keyPadding[2] = request.keyPadding[static_cast<std::size_t>(c.n - 1)] = 1;
    }
    return runOk(engine, request);
}

std::string label(const TileCase& c) {
    std::string out = c.id;
    for (const auto& [name, value] : c.params) out += " " + name + "=" + formatParamValue(value);
    return out + (c.padKeys ? " padded" : "");
}

void expectTileMatches(const WeightTile& whole, const WeightTile& part, float tolerance) {
    for (std::int64_t i = part.r0; i < part.r1; ++i)
        for (std::int64_t j = part.c0; j < part.c1; ++j) {
            const std::size_t w = static_cast<std::size_t>(i * whole.cols() + j);
            const std::size_t p = static_cast<std::size_t>((i - part.r0) * part.cols() + (j - part.c0));
            if (tolerance == 0.0f)
                ASSERT_EQ(part.weights[p], whole.weights[w]) << "query " << i << " key " << j;
            else
                ASSERT_NEAR(part.weights[p], whole.weights[w], tolerance) << "query " << i << " key " << j;
            ASSERT_EQ(part.reasons[p], whole.reasons[w]) << "query " << i << " key " << j;
            ASSERT_EQ(part.multiplicity[p], whole.multiplicity[w]) << "query " << i << " key " << j;
        }
}

// Writes the result to `path` and reads it back: the reader's refusal, or a line saying the file
// was not written or was read back (so a test looking for a refusal's words fails on either).
std::string readBackRefusal(const RunResult& run, const std::string& path) {
    if (auto written = writeResultFile(path, run, 0); !written) return "not written: " + written.error().message;
    auto back = readResultFile(path);
    return back.ok() ? std::string("read back without a refusal") : back.error().message;
}

}  // namespace

TEST(WeightTiles, AnyTileGivesTheWholeHeadsCells) {
    auto engine = makeEngine();
    std::mt19937 gen(5);
    for (const TileCase& c : tileCases()) {
        SCOPED_TRACE(label(c));
        const Qkv3 x = randomQkv(3, c.n, 8, 61);
        const auto r = runCase(*engine, c, x);
        ASSERT_TRUE(r);
        const AttentionResult& res = r->results[0];
        for (int h = 0; h < res.heads; ++h) {
            const WeightTile whole = res.weights->tile(h, 0, res.n, 0, res.m, true);
            // edge rows and columns, whole rows, single cells and random rectangles
            std::vector<std::array<std::int64_t, 4>> rects = {
                {0, 1, 0, res.m}, {res.n - 1, res.n, 0, res.m}, {0, res.n, 0, 1}, {0, res.n, res.m - 1, res.m},
                {res.n / 2, res.n / 2 + 1, res.m / 3, res.m / 3 + 1}};
            for (int t = 0; t < 6; ++t) {
                std::uniform_int_distribution<std::int64_t> row(0, res.n - 1), col(0, res.m - 1);
                std::int64_t r0 = row(gen), r1 = row(gen), c0 = col(gen), c1 = col(gen);
                rects.push_back({std::min(r0, r1), std::max(r0, r1) + 1, std::min(c0, c1), std::max(c0, c1) + 1});
            }
            for (const auto& [r0, r1, c0, c1] : rects) expectTileMatches(whole, res.weights->tile(h, r0, r1, c0, c1, true), c.tolerance);
            // row visits list exactly the allowed cells, with their weights
            std::int64_t visited = 0, entries = 0;
            res.weights->forEachRow(h, 0, res.n, [&](const RowEntries& row) {
                for (std::int64_t t = 0; t < row.count; ++t) {
                    const std::size_t cell = static_cast<std::size_t>(row.query * res.m + row.keys[t]);
                    EXPECT_GT(whole.multiplicity[cell], 0) << "query " << row.query << " key " << row.keys[t];
                    EXPECT_EQ(row.multiplicity[t], whole.multiplicity[cell]);
                    EXPECT_EQ(row.reasons[t], whole.reasons[cell]);
                    EXPECT_NEAR(row.weights[t], whole.weights[cell], c.tolerance);
                    if (t > 0) {
                        EXPECT_LT(row.keys[t - 1], row.keys[t]) << "ascending, distinct keys";
                    }
                    entries += row.multiplicity[t];
                }
                visited += row.count;
                return true;
            });
            std::int64_t allowed = 0, listed = 0;
            for (std::uint8_t mult : whole.multiplicity) {
                allowed += mult > 0;
                listed += mult;
            }
            EXPECT_EQ(visited, allowed);
            EXPECT_EQ(entries, listed);
            EXPECT_EQ(res.weights->entries(h), listed);
        }
    }
}

TEST(WeightTiles, OverviewPoolsTheDenseWeights) {
    auto engine = makeEngine();
    std::vector<TileCase> cases = tileCases();
    for (const TileCase& c : tileCases())
        if (!c.padKeys && (c.id == "full" || c.id == "linear")) {  // their keys padded too (exact zeros)
            cases.push_back(c);
            cases.back().padKeys = true;
        }
    for (const TileCase& c : cases) {
        SCOPED_TRACE(label(c));
        const Qkv3 x = randomQkv(3, c.n, 8, 62);
        const auto r = runCase(*engine, c, x);
        ASSERT_TRUE(r);
        const AttentionResult& res = r->results[0];
        // the overview first: its rows are met for the first time (their norms made as it goes)
        WeightOverview o;
        ASSERT_TRUE(buildOverview(*res.weights, OverviewRequest{1, 0, res.n, 0, res.m, 3}, o));
        const WeightTile whole = res.weights->tile(1, 0, res.n, 0, res.m, true);
        std::vector<float> mx(o.maxWeight.size(), -INFINITY), mn(o.maxWeight.size(), INFINITY);
        std::vector<double> sum(o.maxWeight.size(), 0.0);
        std::vector<ReasonBits> bits(o.maxWeight.size(), 0);
        std::vector<std::uint8_t> zero(o.maxWeight.size(), 0);
        std::array<std::int64_t, kPatternReasonCount> entries{};
        for (std::int64_t i = 0; i < res.n; ++i)
            for (std::int64_t j = 0; j < res.m; ++j) {
                const std::size_t cell = o.cell(i, j), at = static_cast<std::size_t>(i * res.m + j);
                mx[cell] = std::max(mx[cell], whole.weights[at]);
                mn[cell] = std::min(mn[cell], whole.weights[at]);
                sum[cell] += whole.weights[at];
                bits[cell] |= whole.reasons[at];
                if (whole.reasons[at] != 0 && whole.weights[at] == 0.0f) zero[cell] = 1;
                // a key counts once per reason, a key listed more often than it has reasons the
                // extra times under its first
                int first = -1, counted = 0;
                for (int k = 0; k < kPatternReasonCount; ++k)
                    if (whole.reasons[at] & (1u << k)) {
                        if (first < 0) first = k;
                        ++entries[static_cast<std::size_t>(k)];
                        ++counted;
                    }
                if (first >= 0 && whole.multiplicity[at] > counted) entries[static_cast<std::size_t>(first)] += whole.multiplicity[at] - counted;
            }
        EXPECT_EQ(o.reasonEntries, entries);
        // The pattern variants but Star pool by groups, from the kept row statistics (the kernel's
        // float sum): within a few parts per million of a weight (below 1) from the rows' own.
        const bool byGroups = c.id == "sparse_strided" || c.id == "sparse_fixed" || c.id == "longformer" || c.id == "bigbird";
        EXPECT_EQ(poolsByGroups(*res.weights, 1), byGroups);
        const float maxTolerance = byGroups ? 5e-6f : c.tolerance;
        for (std::size_t cell = 0; cell < mx.size(); ++cell) {
            EXPECT_NEAR(o.maxWeight[cell], mx[cell], maxTolerance) << "cell " << cell;
            if (res.weights->denseRows()) {
                EXPECT_NEAR(o.minWeight[cell], mn[cell], c.tolerance) << "cell " << cell;
            }
            EXPECT_NEAR(o.sumWeight[cell], sum[cell], 1e-5) << "cell " << cell;
            EXPECT_EQ(o.reasons[cell], bits[cell]) << "cell " << cell;
            EXPECT_EQ(o.exactZero[cell], zero[cell]) << "cell " << cell;
        }
        expectSameOverviewOnOneAndTwoThreads(*res.weights, OverviewRequest{1, 0, res.n, 0, res.m, 3});
    }
}

// linear and performer pool their cells' sums by factors (Σ_i φ(q_i)/den_i)·(Σ_j φ(k_j)): equal to
// the sums of their tiles' weights, for whole heads and inner regions, causal or not, padded keys.
TEST(WeightTiles, FactoredSumsEqualTheWeightsSums) {
    auto engine = makeEngine();
    for (const TileCase& c : tileCases()) {
        if (c.id != "linear" && c.id != "performer") continue;
        SCOPED_TRACE(label(c));
        for (const bool padKeys : {false, true}) {
            TileCase padded = c;
            padded.padKeys = padKeys;
            const Qkv3 x = randomQkv(3, c.n, 8, 63);
            const auto r = runCase(*engine, padded, x);
            ASSERT_TRUE(r);
            const AttentionResult& res = r->results[0];
            ASSERT_TRUE(poolsSumsByFactors(*res.weights));
            const WeightTile whole = res.weights->tile(2, 0, res.n, 0, res.m, true);
            for (const auto& [r0, r1, c0, c1, f] : std::vector<std::array<std::int64_t, 5>>{
                     {0, res.n, 0, res.m, 3}, {0, res.n, 0, res.m, 7}, {5, res.n - 2, 3, res.m - 1, 4}, {9, 20, 0, res.m, 16}}) {
                SCOPED_TRACE("region " + std::to_string(r0) + ":" + std::to_string(r1) + " x " + std::to_string(c0) + ":" +
                             std::to_string(c1) + " factor " + std::to_string(f));
                OverviewRequest request{2, r0, r1, c0, c1, f};
                WeightOverview everything, sums;
                ASSERT_TRUE(buildOverview(*res.weights, request, everything));
                request.sumsOnly = true;
                ASSERT_TRUE(buildOverview(*res.weights, request, sums));
                ASSERT_EQ(sums.sumWeight.size(), everything.sumWeight.size());
                std::vector<double> expected(sums.sumWeight.size(), 0.0);
                for (std::int64_t i = r0; i < r1; ++i)
                    for (std::int64_t j = c0; j < c1; ++j)
                        expected[sums.cell(i, j)] += whole.weights[static_cast<std::size_t>(i * res.m + j)];
                for (std::size_t cell = 0; cell < expected.size(); ++cell) {
                    EXPECT_NEAR(sums.sumWeight[cell], expected[cell], 1e-5 + 1e-4 * std::abs(expected[cell])) << "cell " << cell;
                    EXPECT_TRUE(std::isnan(sums.maxWeight[cell]) && std::isnan(sums.minWeight[cell])) << "cell " << cell;
                }
                EXPECT_EQ(sums.reasons, everything.reasons);
                EXPECT_EQ(sums.reasonEntries, everything.reasonEntries);
            }
        }
    }
}

TEST(WeightTiles, AResultFileReadBackGivesTheSameTiles) {
    auto engine = makeEngine();
    // (one file per process: the fastest and the portable-kernel runs of this test run at once)
    const std::string path = testing::TempDir() + "weight_tiles_" + std::to_string(::getpid()) + ".safetensors";
    for (const TileCase& c : tileCases()) {
        SCOPED_TRACE(label(c));
        const Qkv3 x = randomQkv(3, c.n, 8, 63);
        const auto r = runCase(*engine, c, x);
        ASSERT_TRUE(r);
        ResultFileOptions options;
        options.denseLimit = 0;  // nothing dense: the tiles come from what the file keeps
        ASSERT_TRUE(writeResultFile(path, *r, 0, options).ok());
        auto back = readResultFile(path);
        ASSERT_TRUE(back.ok()) << back.error().message;
        const AttentionResult& a = r->results[0];
        const AttentionResult& b = (*back)->results[0];
        EXPECT_EQ(b.variantId, a.variantId);
        EXPECT_EQ(b.params, a.params);
        for (int h = 0; h < a.heads; ++h) {
            const WeightTile ta = a.weights->tile(h, 0, a.n, 0, a.m, true);
            const WeightTile tb = b.weights->tile(h, 0, b.n, 0, b.m, true);
            EXPECT_EQ(ta.weights, tb.weights);
            EXPECT_EQ(ta.reasons, tb.reasons);
            EXPECT_EQ(ta.multiplicity, tb.multiplicity);
        }
        EXPECT_EQ(b.extraPatterns.size(), a.extraPatterns.size());
        for (std::int64_t e = 0; e < a.output.numel(); ++e) ASSERT_EQ(a.output[static_cast<std::size_t>(e)], b.output[static_cast<std::size_t>(e)]);
    }
    std::remove(path.c_str());
}

// The kept statistics are the run's own normalisers: the softmax rows' row_max and row_sum agree
// with the shift and sum of the weights' scores (to float rounding).
TEST(WeightTiles, KeptRowStatisticsDescribeTheWeights) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 40, 8, 64);
    for (const std::string id : {"full", "longformer", "sparse_fixed", "bigbird"}) {
        SCOPED_TRACE(id);
        ParamValues params;
        if (id == "bigbird") params = {{"block", std::int64_t{4}}, {"random", std::int64_t{2}}};
        const auto r = runOk(*engine, variantRequest(x, id, params));
        ASSERT_TRUE(r);
        const AttentionResult& res = r->results[0];
        const auto& shift = res.stats.at("row_max").f32;
        const auto& sum = res.stats.at("row_sum").f32;
        for (int h = 0; h < 2; ++h)
            res.weights->forEachRow(h, 0, 40, [&](const RowEntries& row) {
                const std::size_t at = static_cast<std::size_t>(h * 40 + row.query);
                // w = c · exp(s − shift) / sum, so c · exp(s − shift) = w · sum for every key
                double total = 0;
                for (std::int64_t t = 0; t < row.count; ++t) total += row.weights[t];
                EXPECT_NEAR(total, 1.0, 1e-5);
                EXPECT_GT(sum[at], 0.0f);
                EXPECT_TRUE(std::isfinite(shift[at]));
                return true;
            });
    }
}

TEST(WeightTiles, ATileOutsideTheResultIsRefused) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 16, 8, 65);
    const auto r = runOk(*engine, variantRequest(x, "longformer", {{"window", std::int64_t{2}}}));
    ASSERT_TRUE(r);
    const AttentionWeights& w = *r->results[0].weights;
    EXPECT_THROW(w.tile(2, 0, 1, 0, 1), std::out_of_range);
    EXPECT_THROW(w.tile(0, 0, 17, 0, 1), std::out_of_range);
    EXPECT_THROW(w.tile(0, 5, 4, 0, 1), std::out_of_range);
    EXPECT_THROW(w.tile(0, 0, 1, -1, 1), std::out_of_range);
    EXPECT_THROW(w.forEachRow(-1, 0, 1, [](const RowEntries&) { return true; }), std::out_of_range);
    EXPECT_EQ(w.tile(0, 3, 3, 0, 16).weights.size(), 0u);  // an empty rectangle is fine
}

// (found by fuzz_result_file: a NaN in q reached the softmax kernel's exponent conversion)
TEST(WeightTiles, AResultFileWithANaNOrAnInfinityInWhatWeightsComeFromIsRefused) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 16, 8, 67);
    const auto r = runOk(*engine, variantRequest(x, "full", {}));
    ASSERT_TRUE(r);
    const std::string path = testing::TempDir() + "nonfinite_" + std::to_string(::getpid()) + ".safetensors";
    for (const std::string& what : {std::string("q"), std::string("k")}) {
        RunResult broken = *r;
        SharedFloats& t = what == "q" ? broken.q : broken.k;
        auto copy = std::make_shared<std::vector<float>>(t.data.get(), t.data.get() + t.numel());
        (*copy)[5] = what == "q" ? std::nanf("") : std::numeric_limits<float>::infinity();
        t.data = std::shared_ptr<const float>(copy, copy->data());
        const std::string refusal = readBackRefusal(broken, path);
        EXPECT_NE(refusal.find("tensor '" + what + "' holds a NaN or an infinity"), std::string::npos) << refusal;
    }
    RunResult broken = *r;
    ASSERT_FALSE(broken.results[0].stats.empty());
    auto& [name, stat] = *broken.results[0].stats.begin();
    stat.f32[1] = std::nanf("");
    const std::string refusal = readBackRefusal(broken, path);
    EXPECT_NE(refusal.find("tensor 'stats." + name + "' holds a NaN or +inf"), std::string::npos) << refusal;
    std::remove(path.c_str());
}

// (found by fuzz_result_file: a parameter missing from the summary threw out of the reader)
TEST(WeightTiles, AResultFileMissingAParameterOrWithAnUnknownVariantIsRefused) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 16, 8, 68);
    const auto r = runOk(*engine, variantRequest(x, "reformer", {}));
    ASSERT_TRUE(r);
    const std::string path = testing::TempDir() + "missing_param_" + std::to_string(::getpid()) + ".safetensors";
    RunResult broken = *r;
    broken.results[0].params.erase("n_hashes");
    std::string refusal = readBackRefusal(broken, path);
    EXPECT_NE(refusal.find("parameter 'n_hashes' of reformer is missing"), std::string::npos) << refusal;
    broken = *r;
    broken.results[0].params["n_hashes"] = std::int64_t{0};
    refusal = readBackRefusal(broken, path);
    EXPECT_NE(refusal.find("n_hashes"), std::string::npos) << refusal;
    broken = *r;
    broken.results[0].variantId = "flash";
    refusal = readBackRefusal(broken, path);
    EXPECT_NE(refusal.find("variant 'flash' is not one this AttnScope has"), std::string::npos) << refusal;
    std::remove(path.c_str());
}

TEST(WeightTiles, AResultFileWhoseStatisticsDisagreeIsRefused) {
    auto engine = makeEngine();
    const Qkv3 x = randomQkv(2, 16, 8, 66);
    const auto r = runOk(*engine, variantRequest(x, "longformer", {{"window", std::int64_t{2}}}));
    ASSERT_TRUE(r);
    RunResult broken = *r;
    broken.results[0].stats["row_sum"] = PlainTensor::fromF32({2, 15}, std::vector<float>(30, 1.0f));
    const std::string path = testing::TempDir() + "broken_stats_" + std::to_string(::getpid()) + ".safetensors";
    ASSERT_TRUE(writeResultFile(path, broken, 0).ok());
    auto back = readResultFile(path);
    ASSERT_FALSE(back.ok());
    EXPECT_NE(back.error().message.find("stats.row_sum must be F32 [2, 16]"), std::string::npos) << back.error().message;
    EXPECT_NE(back.error().message.find(path), std::string::npos);
    // a missing draw names the draw
    RunResult noDraws = *runOk(*engine, variantRequest(x, "bigbird", {{"block", std::int64_t{2}}, {"random", std::int64_t{1}}}));
    noDraws.results[0].diagnostics.erase("rand_attn");
    ASSERT_TRUE(writeResultFile(path, noDraws, 0).ok());
    auto noDrawsBack = readResultFile(path);
    ASSERT_FALSE(noDrawsBack.ok());
    EXPECT_NE(noDrawsBack.error().message.find("diagnostic.rand_attn is missing"), std::string::npos)
        << noDrawsBack.error().message;
    std::remove(path.c_str());
}
