// The checkpoint forward pass against an independent double-precision reference written here
// from the architectures' definitions (post-LN BERT/RoBERTa, pre-LN causal GPT-2 with Conv1D
// weights), and `full` on a layer's real Q/K/V against the model's own attention.

#include <attnscope/engine.h>

#include "../support/reference_math.h"
#include "../support/tiny_model.h"
#include "../support/tiny_model_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using attnscope::testing::defaultPrefix;
using attnscope::testing::makeTinyModel;
using attnscope::testing::TinyModel;
using attnscope::testing::TinyModelSpec;
using attnscope::testing::writeTinyModel;
using attnscope::testing::writeTinyTokenizerJson;
using namespace attnscope::testing::reference;
using attnscope::testing::Reference;
using attnscope::testing::referenceForward;

namespace {

class ModelForwardTest : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-forward-" + std::string(GetParam()) + "-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        TinyModelSpec spec;
        spec.arch = GetParam();
        if (spec.arch == "roberta") spec.positions = 26;
        m_model = makeTinyModel(spec);
        writeTinyModel(m_model, m_dir, defaultPrefix(spec.arch));
        auto engine = Engine::create();
        ASSERT_TRUE(engine.ok());
        m_engine = std::move(engine.value());
    }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path m_dir;
    TinyModel m_model;
    std::unique_ptr<Engine> m_engine;
};

const std::vector<std::int64_t> kIds = {3, 17, 5, 39, 0, 22, 8, 11, 30};

}  // namespace

TEST_P(ModelForwardTest, AttentionAndHiddenStatesMatchTheReference) {
    auto info = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->layers, 2);
    EXPECT_EQ(info->heads, 4);
    EXPECT_EQ(info->headDim, 4);
    EXPECT_EQ(info->causal, m_model.spec.arch == "gpt2");
    ModelInput input;
    input.ids = kIds;
    auto forward = m_engine->forwardModel(input);
    ASSERT_TRUE(forward.ok()) << forward.error().message;
    const ModelForward& f = *forward.value();
    const Reference ref = referenceForward(m_model, kIds);
    const std::size_t n = kIds.size();
    ASSERT_EQ(f.attention.size(), 2u);
    ASSERT_EQ(f.hidden.size(), 3u);
    double worstAttention = 0, worstHidden = 0;
    for (std::size_t l = 0; l < 2; ++l) {
        ASSERT_EQ(f.attention[l].shape, (std::vector<std::int64_t>{4, static_cast<std::int64_t>(n), static_cast<std::int64_t>(n)}));
        for (std::size_t h = 0; h < 4; ++h)
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j)
                    worstAttention = std::max(worstAttention, std::abs(f.attention[l].f32[(h * n + i) * n + j] -
                                                                       ref.attention[l][h][i][j]));
    }
    for (std::size_t l = 0; l < 3; ++l)
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = 0; c < 16; ++c)
                worstHidden = std::max(worstHidden, std::abs(f.hidden[l].f32[i * 16 + c] - ref.hidden[l][i][c]));
    EXPECT_LT(worstAttention, 1e-4);
    EXPECT_LT(worstHidden, 1e-4);
    // The captured Q, K, V are per head: [heads, n, headDim].
    ASSERT_EQ(f.qkv.size(), 2u);
    EXPECT_EQ(f.qkv[1].q.shape, (std::vector<std::int64_t>{4, static_cast<std::int64_t>(n), 4}));
}

TEST_P(ModelForwardTest, FullOnALayersRealQkvEqualsTheModelsOwnAttention) {
    ASSERT_TRUE(m_engine->openModel(m_dir.string()).ok());
    ModelInput input;
    input.ids = kIds;
    auto forward = m_engine->forwardModel(input);
    ASSERT_TRUE(forward.ok());
    // Run `full` on explicit Q/K/V taken from layer 1; causal for GPT-2 as the model is.
    RunRequest request;
    request.source = forward.value()->qkv[1];
    VariantRequest full{"full", {}};
    if (m_model.spec.arch == "gpt2") full.params["causal"] = true;
    request.variants.push_back(full);
    auto run = m_engine->run(request);
    ASSERT_TRUE(run.ok()) << run.error().message;
    const AttentionResult& r = run.value()->results[0];
    const PlainTensor& own = forward.value()->attention[1];
    const std::int64_t n = static_cast<std::int64_t>(kIds.size());
    double worst = 0;
    for (int h = 0; h < 4; ++h)
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                worst = std::max(worst, static_cast<double>(std::abs(r.weightAt(h, i, j) - own.f32[static_cast<std::size_t>((h * n + i) * n + j)])));
    EXPECT_LT(worst, 1e-5);
}

// The model's own attention of every layer, as the window and `run --model` ask for it (text through
// the folder's tokenizer.json), against the double-precision forward on the same tokens.
TEST_P(ModelForwardTest, OwnAttentionOfEveryLayerIsTheReferences) {
    writeTinyTokenizerJson(m_dir);
    for (int layer = 0; layer < 2; ++layer) {
        RunRequest request;
        request.source = ModelLayerSource{m_dir.string(), layer, true, {}, InputSpec{"the big dog ran to the park"}};
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        const RunResult& r = *run.value();
        ASSERT_EQ(r.ownAttention, 0);
        EXPECT_EQ(r.modelFamily, m_model.spec.arch);
        EXPECT_EQ(std::get<bool>(r.results[0].params.at("causal")), m_model.spec.arch == "gpt2");
        std::vector<std::int64_t> ids;
        for (const Token& t : r.input.tokens) ids.push_back(t.id);
        const Reference ref = referenceForward(m_model, ids);
        const std::int64_t n = std::int64_t(ids.size());
        ASSERT_EQ(n, 9);
        for (int h = 0; h < 4; ++h) {
            const WeightTile tile = r.results[0].weights->tile(h, 0, n, 0, n);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    ASSERT_NEAR(tile.at(i, j), ref.attention[std::size_t(layer)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 1e-4)
                        << "layer " << layer << " head " << h << " " << i << "," << j;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Architectures, ModelForwardTest, ::testing::Values("bert", "roberta", "gpt2"));

TEST(ModelForward, BadIdsAndNoModelAreClearErrors) {
    auto engine = Engine::create();
    ASSERT_TRUE(engine.ok());
    auto none = engine.value()->forwardModel(ModelInput{});
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message.find("no model is open"), std::string::npos);

    const fs::path dir = fs::temp_directory_path() / ("attnscope-forward-bad-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    TinyModel model = makeTinyModel({});
    model.tensors.at("encoder.layer.0.attention.self.query.weight").f32[3] = std::nanf("");
    writeTinyModel(model, dir, "bert.");
    ASSERT_TRUE(engine.value()->openModel(dir.string()).ok());
    ModelInput input;
    input.ids = {1, 2, 40};
    auto outside = engine.value()->forwardModel(input);
    ASSERT_FALSE(outside.ok());
    EXPECT_NE(outside.error().message.find("token 2 has id 40, outside the vocabulary [0, 40)"), std::string::npos)
        << outside.error().message;
    input.ids.assign(25, 1);
    auto tooLong = engine.value()->forwardModel(input);
    ASSERT_FALSE(tooLong.ok());
    EXPECT_NE(tooLong.error().message.find("at most 24"), std::string::npos) << tooLong.error().message;
    input.ids = {1, 2, 3};
    auto nan = engine.value()->forwardModel(input);
    ASSERT_TRUE(nan.ok()) << "NaN weights are warned, not fatal";
    bool warned = false;
    for (const auto& note : nan.value()->notices)
        warned = warned || note.find("bert.encoder.layer.0.attention.self.query.weight' contains NaN") != std::string::npos;
    EXPECT_TRUE(warned);
    fs::remove_all(dir);
}
