// Transformer-XL's receptive field: the cone worked out by hand for three layouts, the rollout on
// a two-token case by hand and against the dense float64 product of Ã matrices written here from
// Abnar & Zuidema's definition, its invariants, and bad input.

#include <attnscope/receptive_field.h>

#include <gtest/gtest.h>

#include <random>

using namespace attnscope::engine;

namespace {

SegmentLayout layout(std::int64_t n, std::int64_t segment, std::int64_t memory, bool sameLength = false) {
    SegmentLayout l;
    l.n = n;
    l.segment = segment;
    l.memory = memory;
    l.sameLength = sameLength;
    return l;
}

ReceptiveField cone(const SegmentLayout& l, std::int64_t query, int layers) {
    auto r = structuralReceptiveField(l, query, layers);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r.value() : ReceptiveField{};
}

// Random row-stochastic attention [heads, n, n] over the keys each query sees, zero elsewhere.
PlainTensor randomAttention(const SegmentLayout& l, std::int64_t heads, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(0.05f, 1.0f);
    PlainTensor a = PlainTensor::zeros(DType::F32, {heads, l.n, l.n});
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < l.n; ++i) {
            double sum = 0;
            std::vector<float> row(static_cast<std::size_t>(i - l.firstKey(i) + 1));
            for (auto& x : row) sum += (x = u(rng));
            for (std::int64_t j = l.firstKey(i); j <= i; ++j)
                a.f32[static_cast<std::size_t>((h * l.n + i) * l.n + j)] = static_cast<float>(row[static_cast<std::size_t>(j - l.firstKey(i))] / sum);
        }
    return a;
}

using Matrix = std::vector<std::vector<double>>;

// Ã = ½·(head mean) + ½·I, rows re-normalised, dense.
Matrix residual(const PlainTensor& a) {
    const std::int64_t heads = a.shape[0], n = a.shape[1];
    Matrix m(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), 0.0));
    for (std::int64_t i = 0; i < n; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
            double mean = 0;
            for (std::int64_t h = 0; h < heads; ++h) mean += a.f32[static_cast<std::size_t>((h * n + i) * n + j)];
            auto& x = m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
            x = 0.5 * mean / static_cast<double>(heads) + (i == j ? 0.5 : 0.0);
            sum += x;
        }
        for (auto& x : m[static_cast<std::size_t>(i)]) x /= sum;
    }
    return m;
}

std::vector<double> rowTimes(const std::vector<double>& row, const Matrix& m) {
    std::vector<double> out(row.size(), 0.0);
    for (std::size_t i = 0; i < row.size(); ++i)
        for (std::size_t j = 0; j < row.size(); ++j) out[j] += row[i] * m[i][j];
    return out;
}

}  // namespace

TEST(ReceptiveField, ConeGrowsBySegmentsWhenMemoryEqualsSegment) {
    // L = M = 4: query 13 sits in segment 3 [12, 16) and sees 8 … 13; position 8 (segment 2)
    // sees 4 …; position 4 sees 0 …
    const auto f = cone(layout(20, 4, 4), 13, 4);
    EXPECT_EQ(f.reach, (std::vector<std::int64_t>{13, 8, 4, 0, 0}));
    EXPECT_EQ(f.segmentReach, (std::vector<std::int64_t>{13, 12, 12, 12, 12}));
}

TEST(ReceptiveField, ConeWithShortMemoryStepsBackOneSegmentStartPerLayer) {
    // L = 4, M = 2: 13 sees from 12 − 2 = 10; 10 (segment 2, start 8) from 6; 6 from 2; 2 from 0
    EXPECT_EQ(cone(layout(20, 4, 2), 13, 4).reach, (std::vector<std::int64_t>{13, 10, 6, 2, 0}));
    // no memory: the cone never leaves the segment
    EXPECT_EQ(cone(layout(20, 4, 0), 13, 3).reach, (std::vector<std::int64_t>{13, 12, 12, 12}));
}

TEST(ReceptiveField, SameLengthConeStepsBackMMinusOnePerLayer) {
    // same_length, M = 3: every query sees its last 3 keys, i − 2 … i
    EXPECT_EQ(cone(layout(20, 4, 3, true), 13, 3).reach, (std::vector<std::int64_t>{13, 11, 9, 7}));
}

TEST(ReceptiveField, RolloutOfTwoTokensByHand) {
    // one layer, one head, L = 2, M = 0: row 1 = [0.25, 0.75]; Ã row 1 = ½[0.25, 0.75] + ½[0, 1]
    const SegmentLayout l = layout(2, 2, 0);
    PlainTensor a = PlainTensor::fromF32({1, 2, 2}, {1.0f, 0.0f, 0.25f, 0.75f});
    auto band = attentionBandOf(a, l);
    ASSERT_TRUE(band.ok()) << band.error().message;
    EXPECT_FLOAT_EQ(band.value().at(1, 0), 0.25f);
    EXPECT_FLOAT_EQ(band.value().at(0, 1), 0.0f);
    auto f = receptiveField(l, 1, {band.value()});
    ASSERT_TRUE(f.ok()) << f.error().message;
    ASSERT_EQ(f.value().flow.size(), 2u);
    EXPECT_DOUBLE_EQ(f.value().flow[0][1], 1.0);
    EXPECT_NEAR(f.value().flow[1][0], 0.125, 1e-7);
    EXPECT_NEAR(f.value().flow[1][1], 0.875, 1e-7);
}

TEST(ReceptiveField, RolloutMatchesDenseProductAcrossSegments) {
    std::mt19937 rng(11);
    for (const SegmentLayout& l : {layout(11, 3, 2), layout(13, 4, 4), layout(9, 2, 5), layout(10, 3, 3, true)}) {
        std::vector<PlainTensor> attention;
        std::vector<AttentionBand> bands;
        for (int layer = 0; layer < 3; ++layer) {
            attention.push_back(randomAttention(l, 2, rng));
            auto band = attentionBandOf(attention.back(), l);
            ASSERT_TRUE(band.ok()) << band.error().message;
            bands.push_back(band.value());
        }
        for (std::int64_t q : {l.n - 1, l.n / 2, std::int64_t{0}}) {
            auto f = receptiveField(l, q, bands);
            ASSERT_TRUE(f.ok()) << f.error().message;
            // flow_d = e_q · Ã_top · … · Ã_(top − d + 1)
            std::vector<double> expected(static_cast<std::size_t>(l.n), 0.0);
            expected[static_cast<std::size_t>(q)] = 1.0;
            for (int d = 1; d <= 3; ++d) {
                expected = rowTimes(expected, residual(attention[static_cast<std::size_t>(3 - d)]));
                double sum = 0;
                for (std::int64_t j = 0; j < l.n; ++j) {
                    const double got = f.value().flow[static_cast<std::size_t>(d)][static_cast<std::size_t>(j)];
                    EXPECT_NEAR(got, expected[static_cast<std::size_t>(j)], 1e-6) << "n " << l.n << " q " << q << " d " << d << " j " << j;
                    // nothing flows from outside the structural cone
                    if (j < f.value().reach[static_cast<std::size_t>(d)] || j > q) {
                        EXPECT_EQ(got, 0.0);
                    }
                    sum += got;
                }
                EXPECT_NEAR(sum, 1.0, 1e-9);
            }
        }
    }
}

TEST(ReceptiveField, RefusesBadInput) {
    const SegmentLayout l = layout(8, 4, 4);
    EXPECT_FALSE(structuralReceptiveField(l, 8, 2).ok());
    EXPECT_FALSE(structuralReceptiveField(l, -1, 2).ok());
    EXPECT_FALSE(structuralReceptiveField(l, 3, -1).ok());
    EXPECT_FALSE(structuralReceptiveField(layout(8, 0, 4), 3, 1).ok());
    EXPECT_FALSE(attentionBandOf(PlainTensor::zeros(DType::F32, {2, 8, 7}), l).ok());
    EXPECT_FALSE(attentionBandOf(PlainTensor::zeros(DType::I64, {2, 8, 8}), l).ok());
    auto band = attentionBandOf(PlainTensor::zeros(DType::F32, {1, 6, 6}), layout(6, 4, 4));
    ASSERT_TRUE(band.ok());
    const auto r = receptiveField(l, 3, {band.value()});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("8 positions"), std::string::npos) << r.error().message;
}
