// The built-in trainer: the model learns its task, the folder reopens as a checkpoint, and the
// reopened model (attending through the variant's own code) reproduces the trained model's
// states, which checks each differentiable attention against its variant.

#include <attnscope/engine.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;

namespace {

class TrainerTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-train-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        auto engine = Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
    }
    void TearDown() override { fs::remove_all(m_dir); }

    TrainOptions small(const std::string& variant, ParamValues params, const std::string& name) {
        TrainOptions o;
        o.task = "copy";
        o.variant = variant;
        o.params = std::move(params);
        o.layers = 2;
        o.heads = 2;
        o.dim = 16;
        o.steps = 3;
        o.batch = 4;
        o.length = 4;
        o.out = (m_dir / name).string();
        return o;
    }

    /// Reopens the folder and checks the last hidden states on the probe example.
    void expectReloadIdentical(const TrainReport& report, const std::string& expectedAttention) {
        auto info = m_engine->openModel(report.folder);
        ASSERT_TRUE(info.ok()) << info.error().message;
        EXPECT_EQ(info->arch, "roberta");
        EXPECT_EQ(info->attention.rfind(expectedAttention, 0), 0u) << info->attention;
        EXPECT_EQ(info->tokenizer, "byte-level-bpe");
        ModelInput input;
        input.ids = report.probeIds;
        auto f = m_engine->forwardModel(input);
        ASSERT_TRUE(f.ok()) << f.error().message;
        const PlainTensor& last = f.value()->hidden.back();
        ASSERT_EQ(last.f32.size(), report.probeHidden.size());
        double worst = 0;
        for (std::size_t i = 0; i < last.f32.size(); ++i)
            worst = std::max(worst, static_cast<double>(std::abs(last.f32[i] - report.probeHidden[i])));
        EXPECT_LT(worst, 1e-4) << expectedAttention;
        // Its own attention (what the window and `run --model` show) is the trained variant with
        // its parameters and seed: the weights the model's pass attended with.
        RunRequest request;
        // "abcdefghi": 11 tokens with <s> and </s>, as long as the training's
        request.source = ModelLayerSource{report.folder, 0, true, {}, InputSpec{"abcdefghi"}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        const AttentionResult& own = run.value()->results[0];
        EXPECT_EQ(own.variantId, expectedAttention == "softmax" ? "model_softmax" : expectedAttention);
        ModelInput text;
        text.text = request.input()->text;
        auto pass = m_engine->forwardModel(text);
        ASSERT_TRUE(pass.ok()) << pass.error().message;
        const PlainTensor& attended = pass.value()->attention[0];
        const std::int64_t m = pass.value()->n;
        ASSERT_EQ(own.n, m);
        for (int h = 0; h < own.heads; ++h)
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < m; ++j)
                    ASSERT_NEAR(own.weightAt(h, i, j), attended.f32[static_cast<std::size_t>((h * m + i) * m + j)], 1e-5)
                        << expectedAttention << " head " << h << " " << i << "," << j;
        // The model's own attention rows sum to 1 for the softmax-normalised variants.
        const PlainTensor& a = f.value()->attention[0];
        const std::int64_t n = f.value()->n;
        if (expectedAttention != "linformer" && expectedAttention != "star") {
            for (std::int64_t r = 0; r < a.shape[0] * n; ++r) {
                double sum = 0;
                for (std::int64_t j = 0; j < n; ++j) sum += a.f32[static_cast<std::size_t>(r * n + j)];
                EXPECT_NEAR(sum, 1.0, 1e-4);
            }
        }
    }

    fs::path m_dir;
    std::unique_ptr<Engine> m_engine;
};

}  // namespace

TEST_F(TrainerTest, EveryTrainableVariantReloadsWithIdenticalStates) {
    struct Case {
        const char* id;
        ParamValues params;
    } cases[] = {
        {"full", {}},
        {"longformer", {{"window", std::int64_t{2}}}},
        {"sparse_strided", {{"stride", std::int64_t{3}}, {"causal", false}}},
        {"sparse_fixed", {{"block", std::int64_t{3}}, {"summary", std::int64_t{1}}, {"causal", false}}},
        {"bigbird", {{"block", std::int64_t{1}}, {"random", std::int64_t{2}}}},
        {"star", {}},
        {"linformer", {{"k", std::int64_t{5}}}},
        {"linear", {}},
        {"performer", {{"nb_features", std::int64_t{16}}}},
    };
    for (const auto& c : cases) {
        auto report = m_engine->train(small(c.id, c.params, c.id));
        ASSERT_TRUE(report.ok()) << c.id << ": " << report.error().message;
        EXPECT_EQ(report->sequenceLength, 11);  // <s> 4 symbols | 4 masks </s>
        ASSERT_EQ(report->log.size(), 3u);
        expectReloadIdentical(report.value(), c.id == std::string("full") ? "softmax" : c.id);
    }
}

TEST_F(TrainerTest, CopyIsLearnedWellAboveChance) {
    TrainOptions o = small("full", {}, "copy");
    o.heads = 4;
    o.dim = 32;
    o.length = 4;
    o.steps = 400;
    o.batch = 32;
    auto report = m_engine->train(o);
    ASSERT_TRUE(report.ok()) << report.error().message;
    ASSERT_GE(report->log.size(), 2u);
    EXPECT_LT(report->log.back().loss, report->log.front().loss) << "the loss falls";
    EXPECT_GT(report->log.back().accuracy, 5 * report->chanceAccuracy)
        << "accuracy " << report->log.back().accuracy << ", chance " << report->chanceAccuracy;
    // The folder records what it was trained with.
    std::ifstream in(fs::path(report->folder) / "config.json");
    std::stringstream s;
    s << in.rdbuf();
    EXPECT_NE(s.str().find("\"task\": \"copy\""), std::string::npos);
    EXPECT_LE(fs::file_size(fs::path(report->folder) / "model.safetensors"), 5u << 20);
}

TEST_F(TrainerTest, TextTaskMasksBytesAndTheLossFalls) {
    TrainOptions o = small("longformer", {{"window", std::int64_t{3}}}, "text");
    o.task = "text";
    std::string text;
    for (int i = 0; i < 40; ++i) text += "abcabcabd ";
    o.text = text;
    o.length = 16;
    o.steps = 150;
    o.batch = 16;
    auto report = m_engine->train(o);
    ASSERT_TRUE(report.ok()) << report.error().message;
    EXPECT_EQ(report->sequenceLength, 18);               // <s> 16 bytes </s>
    EXPECT_NEAR(report->chanceAccuracy, 1.0 / 5, 1e-12);  // a, b, c, d and the space
    EXPECT_LT(report->log.back().loss, 0.7 * report->log.front().loss);
    expectReloadIdentical(report.value(), "longformer");
}

TEST_F(TrainerTest, RefusalsNameTheProblem) {
    auto notTrainable = m_engine->train(small("reformer", {}, "r"));
    ASSERT_FALSE(notTrainable.ok());
    EXPECT_NE(notTrainable.error().message.find("cannot be trained yet"), std::string::npos);
    TrainOptions o = small("full", {}, "x");
    o.dim = 30;
    o.heads = 4;
    auto badDim = m_engine->train(o);
    ASSERT_FALSE(badDim.ok());
    EXPECT_NE(badDim.error().message.find("multiple of heads"), std::string::npos);
    TrainOptions t = small("full", {}, "t");
    t.task = "text";
    t.text = "abc";
    auto shortText = m_engine->train(t);
    ASSERT_FALSE(shortText.ok());
    EXPECT_NE(shortText.error().message.find("needs a training text"), std::string::npos);
    // BigBird's blocks must tile the 11 tokens of these examples.
    auto badBlock = m_engine->train(small("bigbird", {{"block", std::int64_t{4}}}, "b"));
    ASSERT_FALSE(badBlock.ok());
    EXPECT_NE(badBlock.error().message.find("bigbird"), std::string::npos) << badBlock.error().message;
}

TEST_F(TrainerTest, TransfoXlLearnsAndItsFolderReopensAsATransfoXlCheckpoint) {
    // A text with structure across segments: the model must lower its held-out loss, and the
    // folder it writes must read back (segment by segment, with memory) to the same states.
    std::string text;
    for (int i = 0; i < 60; ++i) text += "the cat sat on the mat. the dog ran to the park. ";
    TrainOptions o;
    o.arch = "transfo-xl";
    o.task = "text";
    o.text = text;
    o.segment = 8;
    o.memory = 8;
    o.layers = 2;
    o.heads = 2;
    o.dim = 16;
    o.steps = 120;
    o.batch = 8;
    o.learningRate = 1e-2;
    o.out = (m_dir / "txl").string();
    auto report = m_engine->train(o);
    ASSERT_TRUE(report.ok()) << report.error().message;
    ASSERT_GE(report->log.size(), 2u);
    EXPECT_LT(report->log.back().loss, 0.7 * report->log.front().loss);
    EXPECT_LT(report->log.back().loss, std::log(256.0));

    auto info = m_engine->openModel(report->folder);
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->arch, "transfo-xl");
    EXPECT_EQ(info->tokenizer, "bytes");
    ModelInput input;
    input.ids = report->probeIds;
    auto f = m_engine->forwardModel(input);
    ASSERT_TRUE(f.ok()) << f.error().message;
    const PlainTensor& last = f.value()->hidden.back();
    ASSERT_EQ(last.f32.size(), report->probeHidden.size());
    double worst = 0;
    for (std::size_t i = 0; i < last.f32.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::abs(last.f32[i] - report->probeHidden[i])));
    EXPECT_LT(worst, 1e-4);
    // queries after the first segment put weight on their memory (keys before their segment)
    const PlainTensor& a = f.value()->attention[1];
    const std::int64_t n = f.value()->n;
    double memoryShare = 0;
    int rows = 0;
    for (std::int64_t h = 0; h < a.shape[0]; ++h)
        for (std::int64_t i = o.segment; i < n; ++i) {
            const std::int64_t start = i / o.segment * o.segment;
            for (std::int64_t j = 0; j < start; ++j) memoryShare += a.f32[static_cast<std::size_t>((h * n + i) * n + j)];
            ++rows;
        }
    EXPECT_GT(memoryShare / rows, 0.05);

    // bad options: another task, a text too short for the segment
    TrainOptions copy = o;
    copy.task = "copy";
    EXPECT_FALSE(m_engine->train(copy).ok());
    TrainOptions tiny = o;
    tiny.text = "short";
    auto refused = m_engine->train(tiny);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("needs at least"), std::string::npos) << refused.error().message;
}
