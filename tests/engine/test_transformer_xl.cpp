// `transformer_xl`: its keys (segment memory, same_length as the reference's mask), its relative
// scores against an independent float64 computation, the _rel_shift identity, the four score
// terms, given u, v, r, and bad input.

#include "sparse_test_support.h"

#include <attnscope/score_terms.h>
#include <attnscope/variant_catalog.h>

#include <algorithm>

using namespace sparse_test;

namespace {

struct XlCase {
    std::int64_t segment, memory;
    bool relative, sameLength;
};

// The reference's mask (MemTransformerLM._forward) for one segment, in its own local indices:
// query a of qlen, key b of klen = mlen + qlen; true = masked.
bool referenceMasked(std::int64_t a, std::int64_t b, std::int64_t qlen, std::int64_t mlen, std::int64_t memLen,
                     bool sameLength) {
    if (b > a + mlen) return true;  // triu(ones, 1 + mlen)
    if (!sameLength) return false;
    const std::int64_t klen = mlen + qlen, maskLen = klen - memLen;
    const std::int64_t shift = maskLen > 0 ? qlen - maskLen : qlen;
    return b <= a - shift;  // tril(ones, -mask_shift_len)
}

// Whether query i sees key j: the memory cached before i's segment is its last M inputs
// (_update_mems), then the reference's mask over [memory | segment].
bool referenceSees(const XlCase& c, std::int64_t n, std::int64_t i, std::int64_t j) {
    const std::int64_t start = i / c.segment * c.segment, qlen = std::min(c.segment, n - start);
    const std::int64_t mlen = std::min(c.memory, start), memoryStart = start - mlen;
    if (j < memoryStart || j >= start + qlen) return false;
    return !referenceMasked(i - start, j - memoryStart, qlen, mlen, c.memory, c.sameLength);
}

struct Reference {
    std::vector<double> weights, output;  // [H, n, n], [H, n, d]
};

// softmax over the keys the query sees of ((q + u)·k + (q + v)·r_(i−j)) / sqrt(d), in double.
Reference referenceAttention(const Qkv3& x, const PlainTensor& u, const PlainTensor& v, const PlainTensor& pos,
                             const XlCase& c, const std::vector<std::uint8_t>& padding = {}) {
    const std::int64_t heads = x.q.shape[0], n = x.q.shape[1], d = x.q.shape[2], rows = pos.shape[1];
    Reference ref;
    ref.weights.assign(static_cast<std::size_t>(heads * n * n), 0.0);
    ref.output.assign(static_cast<std::size_t>(heads * n * d), 0.0);
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < n; ++i) {
            if (!padding.empty() && padding[i]) continue;
            std::vector<double> s(static_cast<std::size_t>(n), -INFINITY);
            double mx = -INFINITY;
            for (std::int64_t j = 0; j < n; ++j) {
                if (!referenceSees(c, n, i, j) || (!padding.empty() && padding[j])) continue;
                double score = 0;
                for (std::int64_t e = 0; e < d; ++e) {
                    const double qi = x.q.f32[(h * n + i) * d + e];
                    score += (qi + (c.relative ? u.f32[h * d + e] : 0.0)) * x.k.f32[(h * n + j) * d + e];
                    if (c.relative) score += (qi + v.f32[h * d + e]) * pos.f32[(h * rows + (i - j)) * d + e];
                }
                s[j] = score / std::sqrt(double(d));
                mx = std::max(mx, s[j]);
            }
            double z = 0;
            for (std::int64_t j = 0; j < n; ++j) z += std::isfinite(s[j]) ? std::exp(s[j] - mx) : 0.0;
            for (std::int64_t j = 0; j < n; ++j) {
                if (!std::isfinite(s[j])) continue;
                const double w = std::exp(s[j] - mx) / z;
                ref.weights[(h * n + i) * n + j] = w;
                for (std::int64_t e = 0; e < d; ++e) ref.output[(h * n + i) * d + e] += w * x.v.f32[(h * n + j) * d + e];
            }
        }
    return ref;
}

void expectMatches(const AttentionResult& r, const Reference& ref, const std::string& what) {
    const std::vector<float> w = denseWeights(r);
    double maxW = 0, maxO = 0;
    for (std::size_t t = 0; t < w.size(); ++t) maxW = std::max(maxW, std::abs(w[t] - ref.weights[t]));
    for (std::size_t t = 0; t < ref.output.size(); ++t) maxO = std::max(maxO, std::abs(r.output[t] - ref.output[t]));
    EXPECT_LT(maxW, 2e-6) << what;
    EXPECT_LT(maxO, 2e-5) << what;
}

ParamValues paramsOf(const XlCase& c) {
    return {{"segment", c.segment}, {"memory", c.memory}, {"relative", c.relative}, {"same_length", c.sameLength}};
}

}  // namespace

TEST(TransformerXl, HandWorkedKeysOfThreeSegments) {
    // n = 7, L = 3, M = 2: segment 0 has no memory; segment 1 (queries 3–5) keeps keys 1, 2;
    // the last, short segment (query 6) keeps keys 4, 5.
    auto x = randomQkv(1, 7, 4, 71);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "transformer_xl", {{"segment", std::int64_t{3}}, {"memory", std::int64_t{2}}}));
    ASSERT_TRUE(r);
    EXPECT_EQ(maskGrid(r->results[0], 0), (std::vector<std::string>{"c......", "cc.....", "ccc....", ".MMc...",
                                                                      ".MMcc..", ".MMccc.", "....MMc"}));
    // same_length: every query sees the last M = 2 keys, itself included (the reference's mask).
    auto same = runOk(*engine, variantRequest(x, "transformer_xl",
                                              {{"segment", std::int64_t{3}}, {"memory", std::int64_t{2}}, {"same_length", true}}));
    ASSERT_TRUE(same);
    EXPECT_EQ(maskGrid(same->results[0], 0), (std::vector<std::string>{"c......", "cc.....", ".cc....", "..Mc...",
                                                                         "...cc..", "....cc.", ".....Mc"}));
}

TEST(TransformerXl, MatchesFloat64ReferenceForEveryOption) {
    const std::int64_t heads = 2, d = 6;
    auto engine = makeEngine();
    const XlCase cases[] = {
        {4, 4, true, false}, {4, 0, true, false}, {3, 7, true, false}, {5, 2, false, false},
        {4, 4, true, true},  {3, 7, true, true},  {1, 1, true, false}, {64, 64, true, false},
    };
    for (std::int64_t n : {1, 13, 29}) {
        auto x = randomQkv(heads, n, d, 72 + static_cast<unsigned>(n));
        for (const XlCase& c : cases) {
            auto r = runOk(*engine, variantRequest(x, "transformer_xl", paramsOf(c)));
            ASSERT_TRUE(r);
            const AttentionResult& res = r->results[0];
            const Reference ref = referenceAttention(x, res.diagnostics.at("r_w_bias"), res.diagnostics.at("r_r_bias"),
                                                     res.diagnostics.at("pos_keys"), c);
            expectMatches(res, ref, "n " + std::to_string(n) + " L " + std::to_string(c.segment) + " M " +
                                        std::to_string(c.memory) + (c.relative ? " relative" : "") +
                                        (c.sameLength ? " same_length" : ""));
        }
    }
}

TEST(TransformerXl, PaddedKeysGetNothingAndPaddedRowsAreZero) {
    const std::int64_t n = 11;
    auto x = randomQkv(2, n, 5, 73);
    RunRequest request = variantRequest(x, "transformer_xl", {{"segment", std::int64_t{4}}, {"memory", std::int64_t{3}}});
    request.keyPadding.assign(n, 0);
    request.keyPadding[2] = request.keyPadding[9] = 1;
    auto engine = makeEngine();
    auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    const AttentionResult& res = r->results[0];
    const Reference ref = referenceAttention(x, res.diagnostics.at("r_w_bias"), res.diagnostics.at("r_r_bias"),
                                             res.diagnostics.at("pos_keys"), {4, 3, true, false}, request.keyPadding);
    expectMatches(res, ref, "padded");
}

TEST(TransformerXl, RelShiftEqualsIndexingByDistance) {
    // The reference's _rel_shift on BD[a, t] = (q_a + v)·r_(klen−1−t) for one segment (qlen 4
    // after mlen 3 memory keys): pad a zero column in front, view [qlen, klen+1] as [klen+1, qlen],
    // drop the first row, view back. Where the key is seen, it must equal (q+v)·r_(i−j), the
    // b + d terms of the score (contentPosition + globalPosition).
    const std::int64_t n = 8, L = 4, M = 3, d = 5;
    auto x = randomQkv(1, n, d, 74);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "transformer_xl", {{"segment", L}, {"memory", M}}));
    ASSERT_TRUE(r);
    const AttentionResult& res = r->results[0];
    const PlainTensor& v = res.diagnostics.at("r_r_bias");
    const PlainTensor& pos = res.diagnostics.at("pos_keys");
    const std::int64_t qlen = L, mlen = M, klen = mlen + qlen, start = L;  // the second segment
    std::vector<double> bd(static_cast<std::size_t>(qlen * klen));
    for (std::int64_t a = 0; a < qlen; ++a)
        for (std::int64_t t = 0; t < klen; ++t) {
            double s = 0;
            for (std::int64_t e = 0; e < d; ++e)
                s += (double(x.q.f32[(start + a) * d + e]) + v.f32[e]) * pos.f32[(klen - 1 - t) * d + e];
            bd[a * klen + t] = s;
        }
    std::vector<double> padded(static_cast<std::size_t>(qlen * (klen + 1)), 0.0);
    for (std::int64_t a = 0; a < qlen; ++a)
        for (std::int64_t t = 0; t < klen; ++t) padded[a * (klen + 1) + t + 1] = bd[a * klen + t];
    // viewed as [klen + 1, qlen], its first row (qlen values) dropped, the rest read as [qlen, klen]
    std::vector<double> shifted(padded.begin() + qlen, padded.end());
    auto terms = transformerXlScoreTerms(*r, 0, 0, start, start + qlen, start - mlen, start + qlen);
    ASSERT_TRUE(terms.ok()) << terms.error().message;
    const double scale = 1.0 / std::sqrt(double(d));
    int checked = 0;
    for (std::int64_t a = 0; a < qlen; ++a)
        for (std::int64_t b = 0; b < klen; ++b) {
            const std::size_t cell = static_cast<std::size_t>(a * klen + b);
            if (b > a + mlen) {
                EXPECT_TRUE(std::isnan(terms->contentPosition[cell]));  // masked: the shift's garbage
                continue;
            }
            const double positional = double(terms->contentPosition[cell]) + terms->globalPosition[cell];
            EXPECT_NEAR(shifted[cell] * scale, positional, 1e-5) << a << ", " << b;
            ++checked;
        }
    EXPECT_EQ(checked, qlen * mlen + qlen * (qlen + 1) / 2);
}

TEST(TransformerXl, FourTermsAddUpToTheScoresItsWeightsUse) {
    const std::int64_t n = 10, d = 4;
    auto x = randomQkv(2, n, d, 75);
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(x, "transformer_xl", {{"segment", std::int64_t{4}}, {"memory", std::int64_t{4}}}));
    ASSERT_TRUE(r);
    const AttentionResult& res = r->results[0];
    auto terms = transformerXlScoreTerms(*r, 0, 1, 0, n, 0, n);
    ASSERT_TRUE(terms.ok()) << terms.error().message;
    const WeightTile tile = res.weights->tile(1, 0, n, 0, n);
    const PlainTensor& u = res.diagnostics.at("r_w_bias");
    for (std::int64_t i = 0; i < n; ++i) {
        // softmax of a + b + c + d over the seen keys = the weights
        std::vector<double> s;
        double mx = -INFINITY;
        for (std::int64_t j = 0; j < n; ++j) {
            const std::size_t cell = static_cast<std::size_t>(i * n + j);
            const bool seen = !std::isnan(terms->content[cell]);
            EXPECT_EQ(seen, tile.weights[cell] > 0) << i << ", " << j;
            s.push_back(seen ? double(terms->content[cell]) + terms->contentPosition[cell] + terms->globalContent[cell] +
                                   terms->globalPosition[cell]
                             : -INFINITY);
            mx = std::max(mx, s.back());
        }
        double z = 0;
        for (double v : s) z += std::isfinite(v) ? std::exp(v - mx) : 0.0;
        for (std::int64_t j = 0; j < n; ++j)
            EXPECT_NEAR(std::isfinite(s[j]) ? std::exp(s[j] - mx) / z : 0.0, tile.weights[i * n + j], 1e-6);
    }
    // term c by hand for one cell: u·k_j / sqrt(d)
    double c = 0;
    for (std::int64_t e = 0; e < d; ++e) c += double(u.f32[1 * d + e]) * x.k.f32[(1 * n + 2) * d + e];
    EXPECT_NEAR(terms->globalContent[5 * n + 2], c / 2.0, 1e-6);
    // another variant's result has no terms
    auto full = runOk(*engine, variantRequest(x, "full", {}));
    ASSERT_TRUE(full);
    EXPECT_FALSE(transformerXlScoreTerms(*full, 0, 0, 0, n, 0, n).ok());
}

TEST(TransformerXl, GivenParametersAreUsedAsGiven) {
    const std::int64_t heads = 2, n = 9, d = 3, L = 3, M = 2;
    auto x = randomQkv(heads, n, d, 76);
    // pos_keys longer than M + L: the first M + L rows are used and kept
    PlainTensor u = randomTensor(1, heads, d, 77), v = randomTensor(1, heads, d, 78), pos = randomTensor(heads, M + L + 2, d, 79);
    u.shape = v.shape = {heads, d};
    RunRequest request = variantRequest(x, "transformer_xl", {{"segment", L}, {"memory", M}});
    request.variantInputs = {{"r_w_bias", u}, {"r_r_bias", v}, {"pos_keys", pos}};
    auto engine = makeEngine();
    auto r = runOk(*engine, request);
    ASSERT_TRUE(r);
    const AttentionResult& res = r->results[0];
    EXPECT_EQ(res.diagnostics.at("r_w_bias").f32, u.f32);
    ASSERT_EQ(res.diagnostics.at("pos_keys").shape, (std::vector<std::int64_t>{heads, M + L, d}));
    EXPECT_EQ(res.diagnostics.at("pos_keys").f32[(1 * (M + L) + 4) * d + 2], pos.f32[(1 * (M + L + 2) + 4) * d + 2]);
    expectMatches(res, referenceAttention(x, u, v, pos, {L, M, true, false}), "given");
    // the same seed draws the same parameters; another seed others
    auto drawn = runOk(*engine, variantRequest(x, "transformer_xl", {{"segment", L}, {"memory", M}}));
    RunRequest other = variantRequest(x, "transformer_xl", {{"segment", L}, {"memory", M}});
    other.projection.seed = 5;
    auto reseeded = runOk(*engine, other);
    auto again = runOk(*engine, variantRequest(x, "transformer_xl", {{"segment", L}, {"memory", M}}));
    ASSERT_TRUE(drawn && reseeded && again);
    EXPECT_EQ(drawn->results[0].diagnostics.at("pos_keys").f32, again->results[0].diagnostics.at("pos_keys").f32);
    EXPECT_NE(drawn->results[0].diagnostics.at("r_w_bias").f32, reseeded->results[0].diagnostics.at("r_w_bias").f32);
}

TEST(TransformerXl, DrawnPositionKeysAreAProjectionOfTheSinusoid) {
    // r_δ = W_r R(δ) with R(δ) = [sin(δ f_k) | cos(δ f_k)], f_k = 10000^(−2k / D), D = H·d: each
    // head's rows are fitted exactly (least squares, float rounding left) by a linear map of R(δ)
    // written here from the definition, and not by one with the frequencies of D = d.
    const std::int64_t heads = 2, d = 4, rows = 4000;
    auto engine = makeEngine();
    auto r = runOk(*engine, variantRequest(randomQkv(heads, 4, d, 80), "transformer_xl",
                                           {{"segment", std::int64_t{1000}}, {"memory", std::int64_t{3000}}}));
    ASSERT_TRUE(r);
    const PlainTensor& pos = r->results[0].diagnostics.at("pos_keys");
    ASSERT_EQ(pos.shape, (std::vector<std::int64_t>{heads, rows, d}));
    const auto relativeFit = [&](std::int64_t model) {
        const std::int64_t w = model;  // (even)
        std::vector<double> enc(static_cast<std::size_t>(rows * w));
        for (std::int64_t delta = 0; delta < rows; ++delta)
            for (std::int64_t k = 0; k < w / 2; ++k) {
                const double angle = double(delta) / std::pow(10000.0, 2.0 * k / double(model));
                enc[delta * w + k] = std::sin(angle);
                enc[delta * w + w / 2 + k] = std::cos(angle);
            }
        double worst = 0;
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t c = 0; c < d; ++c) {
                // normal equations (E^T E) x = E^T y, Gaussian elimination with partial pivoting
                std::vector<double> a(static_cast<std::size_t>(w * (w + 1)), 0.0);
                double norm = 0;
                for (std::int64_t delta = 0; delta < rows; ++delta) {
                    const double y = pos.f32[(h * rows + delta) * d + c];
                    norm += y * y;
                    for (std::int64_t p = 0; p < w; ++p) {
                        for (std::int64_t q = 0; q < w; ++q) a[p * (w + 1) + q] += enc[delta * w + p] * enc[delta * w + q];
                        a[p * (w + 1) + w] += enc[delta * w + p] * y;
                    }
                }
                for (std::int64_t p = 0; p < w; ++p) {
                    std::int64_t best = p;
                    for (std::int64_t q = p + 1; q < w; ++q)
                        if (std::abs(a[q * (w + 1) + p]) > std::abs(a[best * (w + 1) + p])) best = q;
                    for (std::int64_t e = 0; e <= w; ++e) std::swap(a[p * (w + 1) + e], a[best * (w + 1) + e]);
                    for (std::int64_t q = 0; q < w; ++q) {
                        if (q == p) continue;
                        const double f = a[q * (w + 1) + p] / a[p * (w + 1) + p];
                        for (std::int64_t e = p; e <= w; ++e) a[q * (w + 1) + e] -= f * a[p * (w + 1) + e];
                    }
                }
                double residual = 0;
                for (std::int64_t delta = 0; delta < rows; ++delta) {
                    double fit = 0;
                    for (std::int64_t p = 0; p < w; ++p) fit += enc[delta * w + p] * a[p * (w + 1) + w] / a[p * (w + 1) + p];
                    const double e = fit - pos.f32[(h * rows + delta) * d + c];
                    residual += e * e;
                }
                worst = std::max(worst, std::sqrt(residual / norm));
            }
        return worst;
    };
    EXPECT_LT(relativeFit(heads * d), 1e-4);
    EXPECT_GT(relativeFit(d), 1e-2);
}

TEST(TransformerXl, MemoryFollowsSegmentWhenNotGiven) {
    const VariantInfo* info = findVariantInfo("transformer_xl");
    ASSERT_NE(info, nullptr);
    auto resolved = resolveParams(*info, {{"segment", std::int64_t{16}}});
    ASSERT_TRUE(resolved.ok());
    EXPECT_EQ(std::get<std::int64_t>(resolved->at("memory")), 16);
    auto both = resolveParams(*info, {{"segment", std::int64_t{16}}, {"memory", std::int64_t{5}}});
    ASSERT_TRUE(both.ok());
    EXPECT_EQ(std::get<std::int64_t>(both->at("memory")), 5);
    auto defaults = resolveParams(*info, {});
    ASSERT_TRUE(defaults.ok());
    EXPECT_EQ(std::get<std::int64_t>(defaults->at("memory")), 64);
}

TEST(TransformerXl, BadInputIsRefusedNamingTheProblem) {
    auto x = randomQkv(2, 6, 3, 82);
    auto engine = makeEngine();
    EXPECT_NE(errorOf(*engine, variantRequest(x, "transformer_xl", {{"segment", std::int64_t{0}}})).find("segment"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "transformer_xl", {{"memory", std::int64_t{-1}}})).find("memory"), std::string::npos);
    EXPECT_NE(errorOf(*engine, variantRequest(x, "transformer_xl", {{"memory", std::int64_t{0}}, {"same_length", true}}))
                  .find("same_length"),
              std::string::npos);

    PlainTensor u = PlainTensor::zeros(DType::F32, {2, 3}), shortPos = PlainTensor::zeros(DType::F32, {2, 4, 3});
    RunRequest request = variantRequest(x, "transformer_xl", {{"segment", std::int64_t{3}}, {"memory", std::int64_t{2}}});
    request.variantInputs = {{"r_w_bias", u}, {"r_r_bias", u}, {"pos_keys", shortPos}};
    auto tooShort = engine->run(request);
    ASSERT_FALSE(tooShort.ok());
    EXPECT_EQ(tooShort.error().code, ErrorCode::InvalidInput);
    EXPECT_NE(tooShort.error().message.find("pos_keys"), std::string::npos) << tooShort.error().message;
    request.variantInputs.erase("pos_keys");
    auto partial = engine->run(request);
    ASSERT_FALSE(partial.ok());
    EXPECT_NE(partial.error().message.find("together"), std::string::npos) << partial.error().message;
    // cross-attention (m != n) has no segments to keep memory of
    RunRequest cross = variantRequest(x, "transformer_xl", {});
    std::get<QkvTensors>(cross.source).k = randomTensor(2, 7, 3, 83);
    std::get<QkvTensors>(cross.source).v = randomTensor(2, 7, 3, 84);
    EXPECT_FALSE(engine->run(cross).ok());
}
