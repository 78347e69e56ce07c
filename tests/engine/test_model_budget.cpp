// Every model entry point is checked against the memory budget before it allocates: a forward
// pass, the head atlas, and each of the three trainers, each driven with a budget one byte below
// what it needs (refused, naming the budget) and with exactly what it needs (runs).

#include <attnscope/engine.h>
#include <attnscope/model_checkpoint.h>

#include "../support/tiny_model.h"
#include "torch/model/model_pass_bytes.h"
#include "torch/train/training_bytes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;

namespace {

std::unique_ptr<Engine> engineWithBudget(std::uint64_t bytes) {
    EngineOptions options;
    options.memoryBudgetBytes = bytes;
    options.threads = 1;
    auto engine = Engine::create(options);
    EXPECT_TRUE(engine.ok());
    return std::move(engine.value());
}

class ModelBudget : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-model-budget-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        m_model = attnscope::testing::makeTinyModel({});
        attnscope::testing::writeTinyModel(m_model, m_dir / "bert", "bert.");
        auto config = parseModelConfig(m_model.configJson(), "config.json");
        ASSERT_TRUE(config.ok());
        m_config = config.value();
        m_input.ids = {2, 5, 6, 7, 8, 9, 3};
    }
    void TearDown() override { fs::remove_all(m_dir); }
    std::string folder() const { return (m_dir / "bert").string(); }

    fs::path m_dir;
    attnscope::testing::TinyModel m_model;
    ModelConfig m_config;
    ModelInput m_input;
};

TEST_F(ModelBudget, AForwardPassOneByteOverTheBudgetIsRefusedAndAtTheBudgetRuns) {
    const auto n = static_cast<std::int64_t>(m_input.ids.size());
    const ModelPassBytes need = modelPassBytes(m_config, n, m_input.keepAttention);
    auto tight = engineWithBudget(need.total() - 1);
    ASSERT_TRUE(tight->openModel(folder()).ok());
    auto refused = tight->forwardModel(m_input);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::OutOfBudget);
    EXPECT_NE(refused.error().message.find("the model's forward pass on 7 tokens needs"), std::string::npos)
        << refused.error().message;
    EXPECT_NE(refused.error().message.find("over the memory budget"), std::string::npos);

    auto enough = engineWithBudget(need.total());
    ASSERT_TRUE(enough->openModel(folder()).ok());
    auto pass = enough->forwardModel(m_input);
    ASSERT_TRUE(pass.ok()) << pass.error().message;
    // What the pass keeps is inside the count: every layer's Q, K, V, hidden states and attention.
    std::uint64_t kept = 0;
    for (const auto& layer : pass.value()->qkv)
        for (const auto* t : {&layer.q, &layer.k, &layer.v}) kept += t->f32.size() * sizeof(float);
    for (const auto& t : pass.value()->hidden) kept += t.f32.size() * sizeof(float);
    for (const auto& t : pass.value()->attention) kept += t.f32.size() * sizeof(float);
    EXPECT_GE(need.kept, kept);
    // and the weights are every tensor the architecture reads
    std::uint64_t weights = 0;
    for (const auto& [name, t] : m_model.tensors) weights += t.f32.size() * sizeof(float);
    EXPECT_EQ(need.weights, weights);
}

TEST_F(ModelBudget, TheAtlasChecksItsCoverageSettingsOnTopOfThePass) {
    // Exactly the pass: it runs, and the atlas's settings are refused before they run.
    const auto n = static_cast<std::int64_t>(m_input.ids.size());
    auto engine = engineWithBudget(modelPassBytes(m_config, n, true).total());
    ASSERT_TRUE(engine->openModel(folder()).ok());
    AtlasRequest request;
    request.ids = m_input.ids;
    auto atlas = engine->analyzeModel(request);
    ASSERT_FALSE(atlas.ok());
    EXPECT_EQ(atlas.error().code, ErrorCode::OutOfBudget);
    EXPECT_NE(atlas.error().message.find("the head atlas's coverage settings"), std::string::npos) << atlas.error().message;
    auto roomy = engineWithBudget(std::uint64_t{1} << 30);
    ASSERT_TRUE(roomy->openModel(folder()).ok());
    EXPECT_TRUE(roomy->analyzeModel(request).ok());
}

class TrainingBudget : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-train-budget-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    /// Trains with a roomy budget to learn the run's size, then with the shape's exact need minus
    /// one byte (refused before the first step) and with exactly it (trains).
    void expectRefusedBelowAndRunAt(TrainOptions options, const std::function<TrainingShape(const TrainReport&)>& shapeOf) {
        options.out = (m_dir / options.arch).string();
        auto roomy = engineWithBudget(std::uint64_t{1} << 32)->train(options);
        ASSERT_TRUE(roomy.ok()) << roomy.error().message;
        const std::uint64_t need = trainingBytes(shapeOf(roomy.value())).total();
        fs::remove_all(options.out);
        auto refused = engineWithBudget(need - 1)->train(options);
        ASSERT_FALSE(refused.ok()) << options.arch;
        EXPECT_EQ(refused.error().code, ErrorCode::OutOfBudget);
        EXPECT_NE(refused.error().message.find("training needs"), std::string::npos) << refused.error().message;
        EXPECT_NE(refused.error().message.find("lower --batch"), std::string::npos);
        EXPECT_FALSE(fs::exists(fs::path(options.out) / "model.safetensors")) << "nothing is written";
        auto exact = engineWithBudget(need)->train(options);
        EXPECT_TRUE(exact.ok()) << options.arch << ": " << exact.error().message;
    }

    fs::path m_dir;
};

TrainOptions tiny(const std::string& arch) {
    TrainOptions o;
    o.arch = arch;
    o.layers = 2;
    o.heads = 2;
    o.dim = 16;
    o.steps = 2;
    o.batch = 4;
    return o;
}

TEST_F(TrainingBudget, RobertaCountsParametersAdamAndABatchOfActivations) {
    TrainOptions o = tiny("roberta");
    o.task = "copy";
    o.length = 4;
    expectRefusedBelowAndRunAt(o, [&](const TrainReport& r) {
        return TrainingShape{r.parameters, o.batch, r.sequenceLength, r.sequenceLength, o.layers, o.heads, o.dim};
    });
}

TEST_F(TrainingBudget, StarTransformerCountsItsCyclesAndFiveKeysASatellite) {
    TrainOptions o = tiny("star-transformer");
    o.task = "first";
    o.length = 8;
    expectRefusedBelowAndRunAt(o, [&](const TrainReport& r) {
        return TrainingShape{r.parameters, o.batch, r.sequenceLength, 5, o.layers, o.heads, o.dim};
    });
}

TEST_F(TrainingBudget, TransfoXlCountsItsStreamsSegmentAndMemory) {
    TrainOptions o = tiny("transfo-xl");
    o.task = "text";
    o.segment = 8;
    o.memory = 8;
    o.text.clear();
    for (int i = 0; i < 40; ++i) o.text += "the cat sat on the mat. ";
    expectRefusedBelowAndRunAt(o, [&](const TrainReport& r) {
        // (as the trainer reads it: the last tenth held out, the rest in up to `batch` streams;
        // the byte embedding is the tied output layer, which the report leaves out)
        const std::int64_t held = std::max<std::int64_t>(static_cast<std::int64_t>(o.text.size()) / 10, 2 * o.segment + 1);
        const std::int64_t train = static_cast<std::int64_t>(o.text.size()) - held;
        const std::int64_t streams = std::clamp<std::int64_t>(train / (o.segment + 1), 1, o.batch);
        return TrainingShape{r.parameters + 256 * o.dim, streams, o.segment, o.segment + o.memory, o.layers, o.heads, o.dim};
    });
}

}  // namespace
