// Model folders: every refusal FORMATS.md §1 asks for, each with the message that names it.

#include <attnscope/model_checkpoint.h>

#include "../../support/tiny_model.h"

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
using attnscope::testing::writeText;
using attnscope::testing::writeTinyModel;

namespace {

class ModelFolder : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("attnscope-ckpt-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
                 std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path writeModel(const TinyModelSpec& spec = {}) {
        const TinyModel model = makeTinyModel(spec);
        writeTinyModel(model, m_dir, defaultPrefix(spec.arch));
        return m_dir;
    }
    std::string openError() {
        auto opened = ModelCheckpoint::open(m_dir.string());
        EXPECT_FALSE(opened.ok());
        return opened.ok() ? std::string() : opened.error().message;
    }

    fs::path m_dir;
};

}  // namespace

TEST(ModelConfig, ReadsBertFieldsAndDefaults) {
    auto c = parseModelConfig(R"({"model_type":"bert","hidden_size":64,"num_attention_heads":4,"num_hidden_layers":3})",
                              "config.json");
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->family, "bert");
    EXPECT_EQ(c->headDim(), 16);
    EXPECT_EQ(c->vocabSize, 30522);
    EXPECT_EQ(c->maxPositions, 512);
    EXPECT_EQ(c->usablePositions(), 512);
    EXPECT_DOUBLE_EQ(c->layerNormEps, 1e-12);
    EXPECT_FALSE(c->causal);
}

TEST(ModelConfig, ReadsTheTrainersRecord) {
    const std::string base = R"({"model_type":"bert","hidden_size":64,"num_attention_heads":4,"num_hidden_layers":3,)";
    auto c = parseModelConfig(base + R"("attnscope":{"variant":"full","steps":3000,"task":"text","final_loss":1.57,)"
                                     R"("final_accuracy":0.52,"chance_accuracy":0.0039}})",
                              "config.json");
    ASSERT_TRUE(c.ok()) << c.error().message;
    ASSERT_TRUE(c->training.has_value());
    EXPECT_EQ(c->training->steps, 3000);
    EXPECT_EQ(c->training->task, "text");
    EXPECT_DOUBLE_EQ(*c->training->finalLoss, 1.57);
    EXPECT_DOUBLE_EQ(*c->training->finalAccuracy, 0.52);
    EXPECT_FALSE(c->training->nearChance());
    // chance 0.25, accuracy 0.3: within 10 % of the way from chance to 1 (0.325)
    auto low = parseModelConfig(base + R"("attnscope":{"variant":"full","final_accuracy":0.3,"chance_accuracy":0.25}})", "config.json");
    ASSERT_TRUE(low.ok()) << low.error().message;
    EXPECT_TRUE(low->training->nearChance());
    EXPECT_FALSE(parseModelConfig(base + R"("attnscope":{"variant":"full"}})", "config.json")->training.has_value());
    auto bad = parseModelConfig(base + R"("attnscope":{"variant":"full","final_accuracy":"high"}})", "config.json");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("'final_accuracy' must be a finite number"), std::string::npos) << bad.error().message;
}

TEST(ModelConfig, RobertaPositionsStartAfterPad) {
    auto c = parseModelConfig(R"({"model_type":"roberta","pad_token_id":1,"max_position_embeddings":514})", "config.json");
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->positionOffset, 2);
    EXPECT_EQ(c->usablePositions(), 512);
}

TEST(ModelConfig, Gpt2InnerDefaultsToFourTimesHiddenAndIsCausal) {
    auto c = parseModelConfig(R"({"model_type":"gpt2","n_embd":32,"n_head":4,"n_layer":2,"n_inner":null})", "config.json");
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->intermediateSize, 128);
    EXPECT_TRUE(c->causal);
    EXPECT_EQ(c->activation, Activation::GeluTanh);
}

TEST(ModelConfig, RefusesWhatItCannotTrust) {
    using namespace std::string_literals;
    struct Case {
        std::string json;
        const char* expected;
    } cases[] = {
        {R"({"model_type":"bert","hidden_size":30,"num_attention_heads":4})", "not a multiple of the head count 4"},
        {R"({"model_type":"t5"})", "model_type 't5' is not supported"},
        {R"({"hidden_size":64})", "no model_type"},
        {R"({"model_type":"bert","num_attention_heads":100000})", "field 'num_attention_heads' must be in [1, 1024]"},
        {R"({"model_type":"bert","hidden_size":-8})", "field 'hidden_size' must be in [1, 65536]"},
        {R"({"model_type":"bert","hidden_size":64.5})", "field 'hidden_size' must be an integer"},
        {R"({"model_type":"bert","num_hidden_layers":"12"})", "field 'num_hidden_layers' must be an integer"},
        {R"({"model_type":"bert","hidden_act":"quick_gelu"})", "activation 'quick_gelu'"},
        {R"({"model_type":"bert","hidden_size":64,"hidden_size":128})", "duplicate key \"hidden_size\""},
        {"{\"model_type\":\"bert\"}\0{\"x\":1}"s, "NUL byte"},
        {R"({"model_type":"bert","position_embedding_type":"relative_key"})", "relative_key"},
        {R"({"model_type":"gpt2","scale_attn_by_inverse_layer_idx":true})", "scale_attn_by_inverse_layer_idx"},
        {R"([1, 2])", "must be a JSON object"},
        {R"({"model_type":"bert",)", "not valid JSON"},
    };
    for (const auto& c : cases) {
        auto parsed = parseModelConfig(c.json, "config.json");
        ASSERT_FALSE(parsed.ok()) << c.json;
        EXPECT_NE(parsed.error().message.find(c.expected), std::string::npos) << parsed.error().message;
        EXPECT_EQ(parsed.error().message.rfind("config.json", 0), 0u) << "the message names the file";
    }
}

TEST(ModelConfig, RemoteCodeFieldsAreNoticedAndIgnored) {
    auto c = parseModelConfig(R"({"model_type":"bert","auto_map":{"AutoModel":"x.Y"},"_attn_implementation_internal":"z"})",
                              "config.json");
    ASSERT_TRUE(c.ok()) << c.error().message;
    ASSERT_EQ(c->notices.size(), 2u);
    EXPECT_NE(c->notices[0].find("never followed"), std::string::npos);
}

TEST_F(ModelFolder, OpensEachArchitectureWithItsPrefix) {
    for (const char* arch : {"bert", "roberta", "gpt2"}) {
        fs::remove_all(m_dir);
        TinyModelSpec spec;
        spec.arch = arch;
        if (spec.arch == "roberta") spec.positions = 26;
        writeModel(spec);
        auto opened = ModelCheckpoint::open(m_dir.string());
        ASSERT_TRUE(opened.ok()) << arch << ": " << opened.error().message;
        EXPECT_EQ(opened.value()->prefix(), defaultPrefix(arch));
        EXPECT_EQ(opened.value()->config().numLayers, 2);
        auto w = opened.value()->readF32(spec.arch == "gpt2" ? "wte.weight" : "embeddings.word_embeddings.weight");
        ASSERT_TRUE(w.ok());
        EXPECT_EQ(w->shape, (std::vector<std::int64_t>{40, 16}));
    }
}

TEST_F(ModelFolder, AcceptsBareNamesAndTensorFlowLayerNormNames) {
    TinyModel model = makeTinyModel({});
    // Rename every LayerNorm weight/bias to gamma/beta, as TF-converted BERT files have them.
    std::map<std::string, PlainTensor> renamed;
    for (auto& [name, t] : model.tensors) {
        std::string n = name;
        if (n.find("LayerNorm.weight") != std::string::npos) n.replace(n.rfind("weight"), 6, "gamma");
        if (n.find("LayerNorm.bias") != std::string::npos) n.replace(n.rfind("bias"), 4, "beta");
        renamed[n] = t;
    }
    model.tensors = renamed;
    writeTinyModel(model, m_dir, "");
    auto opened = ModelCheckpoint::open(m_dir.string());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    EXPECT_EQ(opened.value()->prefix(), "");
    EXPECT_TRUE(opened.value()->readF32("embeddings.LayerNorm.weight").ok());
}

TEST_F(ModelFolder, RefusesNonWeightFilesByContent) {
    writeModel();
    const fs::path weights = m_dir / "model.safetensors";
    struct Case {
        std::string bytes;
        const char* expected;
    } cases[] = {
        {"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 440473133\n", "Git LFS pointer"},
        {"<!DOCTYPE html><html><body>Sign in</body></html>", "HTML page"},
        {std::string("\x80\x02}q\x00(X\x01\x00\x00\x00", 12), "PyTorch pickle"},
        {std::string("PK\x03\x04", 4) + "archive/constants.pkl....archive/code/__torch__/m.py", "TorchScript"},
        {std::string("PK\x03\x04", 4) + "archive/data.pkl....archive/data/0", "PyTorch pickle"},
        {"", "empty"},
    };
    for (const auto& c : cases) {
        writeText(weights, c.bytes);
        const std::string message = openError();
        EXPECT_NE(message.find(c.expected), std::string::npos) << message;
        EXPECT_NE(message.find("model.safetensors"), std::string::npos) << "names the file: " << message;
    }
}

TEST_F(ModelFolder, RefusesAPickleWhenNoSafetensorsExist) {
    writeModel();
    fs::remove(m_dir / "model.safetensors");
    writeText(m_dir / "pytorch_model.bin", std::string("PK\x03\x04", 4) + "archive/data.pkl");
    const std::string message = openError();
    EXPECT_NE(message.find("pytorch_model.bin"), std::string::npos) << message;
    EXPECT_NE(message.find("Convert it to safetensors"), std::string::npos) << message;
}

TEST_F(ModelFolder, NamesTheMissingConfigAndWeights) {
    EXPECT_NE(openError().find("no config.json"), std::string::npos);
    writeText(m_dir / "config.json", makeTinyModel({}).configJson());
    EXPECT_NE(openError().find("no model.safetensors"), std::string::npos);
    EXPECT_NE(ModelCheckpoint::open((m_dir / "nowhere").string()).error().message.find("not a folder"), std::string::npos);
}

TEST_F(ModelFolder, ShapeMismatchSaysLooksTransposed) {
    TinyModel model = makeTinyModel({});
    auto& t = model.tensors.at("encoder.layer.1.intermediate.dense.weight");
    t.shape = {16, 32};  // stored [in, out] instead of nn.Linear's [out, in]
    writeTinyModel(model, m_dir, "bert.");
    const std::string message = openError();
    EXPECT_NE(message.find("tensor 'bert.encoder.layer.1.intermediate.dense.weight' has shape [16, 32], expected [32, 16]"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("looks transposed"), std::string::npos);
}

TEST_F(ModelFolder, IntegerWeightsAreRefused) {
    TinyModel model = makeTinyModel({});
    PlainTensor ids = PlainTensor::zeros(DType::I64, {16});
    model.tensors.at("encoder.layer.0.output.dense.bias") = ids;
    writeTinyModel(model, m_dir, "bert.");
    EXPECT_NE(openError().find("tensor 'bert.encoder.layer.0.output.dense.bias' has dtype I64, expected a floating-point type"),
              std::string::npos);
}

TEST_F(ModelFolder, MissingTensorAndLayerCountDisagreement) {
    TinyModel model = makeTinyModel({});
    model.tensors.erase("encoder.layer.0.attention.self.key.bias");
    writeTinyModel(model, m_dir, "bert.");
    EXPECT_NE(openError().find("missing tensor 'bert.encoder.layer.0.attention.self.key.bias'"), std::string::npos);

    fs::remove_all(m_dir);
    TinyModelSpec three;
    three.layers = 3;
    TinyModel bigger = makeTinyModel(three);
    bigger.spec.layers = 2;  // config says 2, the file holds 3
    writeTinyModel(bigger, m_dir, "bert.");
    EXPECT_NE(openError().find("the weights hold 3 layers, config.json says 2"), std::string::npos);
}

TEST_F(ModelFolder, ShardedIndexOpensAndRefusesPathsOutsideTheFolder) {
    TinyModel model = makeTinyModel({});
    writeText(m_dir / "config.json", model.configJson());
    std::vector<StWriteItem> first, second;
    std::string map;
    for (const auto& [name, t] : model.tensors) {
        const bool inFirst = name.find("layer.1") == std::string::npos;
        (inFirst ? first : second).push_back({"bert." + name, &t});
        map += std::string(map.empty() ? "" : ",") + "\"bert." + name + "\":\"" +
               (inFirst ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors") + "\"";
    }
    ASSERT_TRUE(writeSafetensors((m_dir / "model-00001-of-00002.safetensors").string(), first, {}).ok());
    ASSERT_TRUE(writeSafetensors((m_dir / "model-00002-of-00002.safetensors").string(), second, {}).ok());
    writeText(m_dir / "model.safetensors.index.json", "{\"metadata\":{\"total_size\":1},\"weight_map\":{" + map + "}}");
    auto opened = ModelCheckpoint::open(m_dir.string());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    bool warned = false;
    for (const auto& w : opened.value()->warnings()) warned = warned || w.find("total_size") != std::string::npos;
    EXPECT_TRUE(warned) << "a wrong total_size is reported";

    std::string escaping = map;
    escaping.replace(escaping.find("model-00002-of-00002"), 20, "../evil/model-000002");
    writeText(m_dir / "model.safetensors.index.json", "{\"weight_map\":{" + escaping + "}}");
    EXPECT_NE(openError().find("not a plain file name in the model folder"), std::string::npos);

    // A tensor listed for one shard but stored in the other.
    std::string swapped = map;
    const auto pos = swapped.find("model-00002-of-00002");
    swapped.replace(pos, 20, "model-00001-of-00002");
    writeText(m_dir / "model.safetensors.index.json", "{\"weight_map\":{" + swapped + "}}");
    const std::string message = openError();
    EXPECT_TRUE(message.find("is not listed") != std::string::npos || message.find("is listed for") != std::string::npos ||
                message.find("is not in its shard") != std::string::npos)
        << message;
}

