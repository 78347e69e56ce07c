// The head atlas against quantities recomputed here from the model's own attention weights.

#include <attnscope/engine.h>

#include "../support/tiny_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;

namespace {

class HeadAtlasTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-atlas-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        writeTinyModel(makeTinyModel({}), m_dir, "bert.");
        writeTinyWordPieceVocab(m_dir);
        auto engine = Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
        auto info = m_engine->openModel(m_dir.string());
        ASSERT_TRUE(info.ok()) << info.error().message;
        ASSERT_EQ(info->tokenizer, "wordpiece");
    }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path m_dir;
    std::unique_ptr<Engine> m_engine;
};

const char* kText = "the cat sat on the mat and the dog ran to the park";

}  // namespace

TEST_F(HeadAtlasTest, TokenizesWithTheModelsTokenizerAndSpecials) {
    ModelInput input;
    input.text = kText;
    auto f = m_engine->forwardModel(input);
    ASSERT_TRUE(f.ok()) << f.error().message;
    const auto& tokens = f.value()->input.tokens;
    ASSERT_EQ(tokens.size(), 15u);  // [CLS] + 13 words + [SEP]
    EXPECT_EQ(f.value()->input.kind, TokenizerKind::Model);
    EXPECT_STREQ(tokenizerName(f.value()->input.kind), "model");
    EXPECT_EQ(tokens.front().text, "[CLS]");
    EXPECT_EQ(tokens.front().id, 2);
    EXPECT_EQ(tokens[2].text, "cat");
    EXPECT_EQ(tokens[2].byteBegin, 4);
    EXPECT_EQ(tokens[2].byteEnd, 7);
    EXPECT_EQ(tokens.back().text, "[SEP]");

    // Token text is the input's bytes (the lowercased vocabulary entry is only the id).
    input.text = "The CAT sat";
    auto cased = m_engine->forwardModel(input);
    ASSERT_TRUE(cased.ok()) << cased.error().message;
    EXPECT_EQ(cased.value()->input.tokens[2].text, "CAT");
    EXPECT_EQ(cased.value()->input.tokens[2].id, 6);
}

TEST_F(HeadAtlasTest, MetricsEqualTheirDefinitionsOnTheModelsWeights) {
    AtlasRequest request;
    request.text = kText;
    request.settings = {{"", "full", {}}, {"", "longformer", {{"window", std::int64_t{1}}}}, {"", "topk", {{"k", std::int64_t{15}}}},
                        {"", "bigbird", {{"block", std::int64_t{4}}}}};
    auto atlas = m_engine->analyzeModel(request);
    ASSERT_TRUE(atlas.ok()) << atlas.error().message;
    const HeadAtlas& a = *atlas.value();
    ASSERT_EQ(a.n, 15);
    ASSERT_EQ(a.metrics.size(), 8u);
    EXPECT_EQ(a.settings[1].label, "longformer window=1");
    EXPECT_NE(a.settingNotes[3].find("multiple"), std::string::npos) << "bigbird b=4 cannot tile 15 tokens: " << a.settingNotes[3];

    ModelInput input;
    input.text = kText;
    auto f = m_engine->forwardModel(input);
    ASSERT_TRUE(f.ok());
    const std::int64_t n = 15;
    for (const HeadMetrics& m : a.metrics) {
        const float* p = f.value()->attention[static_cast<std::size_t>(m.layer)].f32.data() + m.head * n * n;
        double entropy = 0, distance = 0, self = 0, previous = 0, next = 0, first = 0, special = 0, band = 0;
        std::vector<double> byDistance(static_cast<std::size_t>(n), 0.0);
        for (std::int64_t i = 0; i < n; ++i) {
            for (std::int64_t j = 0; j < n; ++j) {
                const double w = p[i * n + j];
                if (w > 0) entropy -= w * std::log(w);
                distance += w * std::abs(static_cast<double>(i - j));
                byDistance[static_cast<std::size_t>(std::abs(i - j))] += w / n;
                if (std::abs(i - j) <= 1) band += w;
                if (j == 0 || j == n - 1) special += w;
            }
            self += p[i * n + i];
            first += p[i * n];
            if (i > 0) previous += p[i * n + i - 1];
            if (i + 1 < n) next += p[i * n + i + 1];
        }
        EXPECT_NEAR(m.entropy, entropy / n, 1e-5);
        EXPECT_NEAR(m.meanDistance, distance / n, 1e-4);
        EXPECT_NEAR(m.selfShare, self / n, 1e-6);
        EXPECT_NEAR(m.previousShare, previous / (n - 1), 1e-6);
        EXPECT_NEAR(m.nextShare, next / (n - 1), 1e-6);
        EXPECT_NEAR(m.firstShare, first / n, 1e-6);
        EXPECT_NEAR(m.specialShare, special / n, 1e-6);
        // full keeps everything and reproduces the head; top-k with k = n too.
        EXPECT_NEAR(m.keptMass[0], 1.0, 1e-6);
        EXPECT_LT(m.outputError[0], 1e-5);
        EXPECT_NEAR(m.keptMass[2], 1.0, 1e-6);
        EXPECT_LT(m.outputError[2], 1e-5);
        // Longformer w=1 keeps exactly the band |i - j| <= 1.
        EXPECT_NEAR(m.keptMass[1], band / n, 1e-5);
        EXPECT_TRUE(std::isnan(m.keptMass[3]));
        // Best window: the smallest w whose band keeps >= 90 %.
        double cumulative = 0;
        std::int64_t window = n - 1;
        for (std::int64_t w = 0; w < n; ++w) {
            cumulative += byDistance[static_cast<std::size_t>(w)];
            if (cumulative >= 0.9 - 1e-6) {
                window = w;
                break;
            }
        }
        EXPECT_NEAR(static_cast<double>(m.bestWindow), static_cast<double>(window), 1.0) << "float rounding at the threshold";
        EXPECT_GE(m.rank90, 1);
        EXPECT_LE(m.rank90, n);
    }
    // Rollout: rows of a product of row-stochastic matrices sum to 1.
    ASSERT_EQ(a.rollout.shape, (std::vector<std::int64_t>{n, n}));
    for (std::int64_t i = 0; i < n; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < n; ++j) sum += a.rollout.f32[static_cast<std::size_t>(i * n + j)];
        EXPECT_NEAR(sum, 1.0, 1e-5);
    }
}

TEST_F(HeadAtlasTest, RolloutOfOneLayerIsHalfAttentionHalfIdentity) {
    fs::remove_all(m_dir);
    TinyModelSpec spec;
    spec.layers = 1;
    writeTinyModel(makeTinyModel(spec), m_dir, "bert.");
    writeTinyWordPieceVocab(m_dir);
    ASSERT_TRUE(m_engine->openModel(m_dir.string()).ok());
    AtlasRequest request;
    request.text = "the cat sat";
    request.settings = {{"", "full", {}}};
    auto atlas = m_engine->analyzeModel(request);
    ASSERT_TRUE(atlas.ok()) << atlas.error().message;
    ModelInput input;
    input.text = request.text;
    auto f = m_engine->forwardModel(input);
    ASSERT_TRUE(f.ok());
    const std::int64_t n = 5, heads = 4;
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
            double mean = 0;
            for (std::int64_t h = 0; h < heads; ++h) mean += f.value()->attention[0].f32[static_cast<std::size_t>((h * n + i) * n + j)];
            const double expected = 0.5 * mean / heads + (i == j ? 0.5 : 0.0);
            EXPECT_NEAR(atlas.value()->rollout.f32[static_cast<std::size_t>(i * n + j)], expected, 1e-5);
        }
    }
}

TEST_F(HeadAtlasTest, FlowThroughTwoLayersIsTheSumOfDisjointPathBottlenecks) {
    // With two layers every path j -> k -> i uses its own middle node k, so the maximum flow is
    // sum_k min(A1[k][j], A2[i][k]) for the residual-mixed, row-normalised head means A1, A2.
    AtlasRequest request;
    request.text = "the cat sat on the mat";
    request.settings = {{"", "full", {}}};
    auto atlas = m_engine->analyzeModel(request);
    ASSERT_TRUE(atlas.ok()) << atlas.error().message;
    ModelInput input;
    input.text = request.text;
    auto f = m_engine->forwardModel(input);
    ASSERT_TRUE(f.ok());
    const std::int64_t n = f.value()->n, heads = 4;
    ASSERT_EQ(atlas.value()->flow.shape, (std::vector<std::int64_t>{n, n}));
    std::vector<std::vector<double>> mixed;
    for (int l = 0; l < 2; ++l) {
        std::vector<double> a(static_cast<std::size_t>(n * n));
        for (std::int64_t i = 0; i < n; ++i) {
            double rowSum = 0;
            for (std::int64_t j = 0; j < n; ++j) {
                double mean = 0;
                for (std::int64_t h = 0; h < heads; ++h)
                    mean += f.value()->attention[static_cast<std::size_t>(l)].f32[static_cast<std::size_t>((h * n + i) * n + j)];
                a[static_cast<std::size_t>(i * n + j)] = 0.5 * mean / heads + (i == j ? 0.5 : 0.0);
                rowSum += a[static_cast<std::size_t>(i * n + j)];
            }
            for (std::int64_t j = 0; j < n; ++j) a[static_cast<std::size_t>(i * n + j)] /= rowSum;
        }
        mixed.push_back(std::move(a));
    }
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double expected = 0;
            for (std::int64_t k = 0; k < n; ++k)
                expected += std::min(mixed[0][static_cast<std::size_t>(k * n + j)], mixed[1][static_cast<std::size_t>(i * n + k)]);
            EXPECT_NEAR(atlas.value()->flow.f32[static_cast<std::size_t>(i * n + j)], expected, 1e-5) << i << "," << j;
        }
}

TEST_F(HeadAtlasTest, EmptyTextIsAClearError) {
    for (const char* text : {"", "   \n\t "}) {
        ModelInput input;
        input.text = text;
        auto f = m_engine->forwardModel(input);
        ASSERT_FALSE(f.ok());
        EXPECT_NE(f.error().message.find("the text has no tokens"), std::string::npos) << f.error().message;
    }
}

TEST_F(HeadAtlasTest, UnknownCoverageVariantAndNoModelAreErrors) {
    AtlasRequest request;
    request.text = kText;
    request.settings = {{"", "nonesuch", {}}};
    auto atlas = m_engine->analyzeModel(request);
    ASSERT_FALSE(atlas.ok());
    EXPECT_NE(atlas.error().message.find("unknown variant 'nonesuch'"), std::string::npos);
    auto fresh = Engine::create();
    ASSERT_TRUE(fresh.ok());
    EXPECT_FALSE(fresh.value()->analyzeModel(AtlasRequest{}).ok());
}

TEST_F(HeadAtlasTest, TruncatesLongTextsKeepingTheClosingSpecial) {
    std::string text;
    for (int i = 0; i < 40; ++i) text += "the cat ";
    ModelInput input;
    input.text = text;
    auto f = m_engine->forwardModel(input);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f.value()->n, 24);
    EXPECT_EQ(f.value()->input.tokens.back().text, "[SEP]");
    ASSERT_FALSE(f.value()->notices.empty());
    EXPECT_NE(f.value()->notices.back().find("the text has 82 tokens but the model takes at most 24; only the first 23"),
              std::string::npos)
        << f.value()->notices.back();
}

TEST_F(HeadAtlasTest, DefaultSettingsAreFittedToTheInputAndAllApply) {
    AtlasRequest request;
    request.text = kText;  // 15 tokens: every catalog setting is written for 128
    request.rollout = false;
    auto atlas = m_engine->analyzeModel(request);
    ASSERT_TRUE(atlas.ok()) << atlas.error().message;
    const HeadAtlas& a = *atlas.value();
    ASSERT_EQ(a.n, 15);
    const auto expected = coverageSettingsFor(15);
    ASSERT_EQ(a.settings.size(), expected.size());
    for (std::size_t s = 0; s < a.settings.size(); ++s) {
        EXPECT_EQ(a.settings[s].params, expected[s].params) << a.settings[s].label;
        EXPECT_EQ(a.settingNotes[s], "") << a.settings[s].label;
        EXPECT_TRUE(std::isfinite(a.metrics.front().outputError[s])) << a.settings[s].label;
    }
}
