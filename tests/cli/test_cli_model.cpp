// attnscope-cli with trained checkpoints: run --model/--layer and analyze, end to end.

#include <attnscope/result_file.h>
#include <attnscope/safetensors.h>

#include "../support/tiny_llama.h"
#include "../support/tiny_model.h"
#include "../support/tiny_model_reference.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;

namespace {

struct Outcome {
    int status = -1;
    std::string err;
};

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class CliModel : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("attnscope-cli-model-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        writeTinyModel(makeTinyModel({}), m_dir / "model", "bert.");
        writeTinyWordPieceVocab(m_dir / "model");
    }
    void TearDown() override { fs::remove_all(m_dir); }

    Outcome cli(const std::string& args) {
        const fs::path err = m_dir / "stderr.txt";
        const std::string command = std::string(ATTNSCOPE_CLI_PATH) + " " + args + " >/dev/null 2>" + err.string();
        const int raw = std::system(command.c_str());
        return Outcome{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(err)};
    }

    fs::path m_dir;
};

}  // namespace

TEST_F(CliModel, RunOnALayersRealQkvWritesModelTokens) {
    const fs::path out = m_dir / "r.safetensors";
    const Outcome r = cli("run --model " + (m_dir / "model").string() + " --layer 1 --variant longformer --param window=2"
                          " --text 'the cat sat on the mat' --out " + out.string() + " --summary " + (m_dir / "s.json").string());
    ASSERT_EQ(r.status, 0) << r.err;
    auto file = SafetensorsFile::open(out.string());
    ASSERT_TRUE(file.ok()) << file.error().message;
    const auto tokens = nlohmann::json::parse(file.value()->header().metadata.at("attnscope.tokens"));
    ASSERT_EQ(tokens.size(), 8u);
    EXPECT_EQ(tokens[0]["text"], "[CLS]");
    EXPECT_EQ(tokens[2]["text"], "cat");
    EXPECT_EQ(tokens[2]["id"], 6);
    EXPECT_EQ(tokens[7]["text"], "[SEP]");
    auto output = file.value()->read("output");
    ASSERT_TRUE(output.ok());
    EXPECT_EQ(output->shape, (std::vector<std::int64_t>{4, 8, 4}));
    const auto summary = nlohmann::json::parse(slurp(m_dir / "s.json"));
    EXPECT_EQ(summary["model"]["layer"], 1);
    const auto request = nlohmann::json::parse(file.value()->header().metadata.at("attnscope.request"));
    EXPECT_EQ(request["input"]["source"], "model");
    EXPECT_EQ(file.value()->header().metadata.at("attnscope.tokenizer"), "model");
}

// Without --variant, run --model writes the layer's own attention: what the model computes, named
// so in the file, every tile equal to an independent double-precision forward.
TEST_F(CliModel, WithoutAVariantTheLayersOwnAttentionIsWritten) {
    for (int layer : {0, 1}) {
        const fs::path out = m_dir / "own.safetensors";
        const Outcome r = cli("run --model " + (m_dir / "model").string() + " --layer " + std::to_string(layer) +
                              " --text 'the big dog ran to the park' --out " + out.string() + " --summary " + (m_dir / "s.json").string());
        ASSERT_EQ(r.status, 0) << r.err;
        const auto summary = nlohmann::json::parse(slurp(m_dir / "s.json"));
        EXPECT_EQ(summary["variant"], "model_softmax");
        EXPECT_EQ(summary["model"]["family"], "bert");
        EXPECT_EQ(summary["model"]["own_attention"], true);
        EXPECT_NE(summary["model"]["attention"].get<std::string>().find("bidirectional softmax"), std::string::npos);
        auto result = readResultFile(out.string());
        ASSERT_TRUE(result.ok()) << result.error().message;
        const AttentionResult& own = result.value()->results.at(0);
        std::vector<std::int64_t> ids;
        for (const Token& t : result.value()->input.tokens) ids.push_back(t.id);
        ASSERT_EQ(ids.size(), 9u);
        const Reference ref = referenceForward(makeTinyModel({}), ids);
        const std::int64_t n = own.n;
        for (int h = 0; h < 4; ++h) {
            const WeightTile tile = own.weights->tile(h, 0, n, 0, n);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    ASSERT_NEAR(tile.at(i, j), ref.attention[std::size_t(layer)][std::size_t(h)][std::size_t(i)][std::size_t(j)], 1e-4)
                        << "layer " << layer << " head " << h << " " << i << "," << j;
        }
    }
    // the model's own attention takes no variant settings; without a model a variant is needed
    Outcome r = cli("run --model " + (m_dir / "model").string() + " --param window=2 --text x --out " + (m_dir / "x.safetensors").string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--param needs --variant"), std::string::npos) << r.err;
    r = cli("run --text x --out " + (m_dir / "x.safetensors").string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--variant is required"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(m_dir / "x.safetensors"));
}

// A Mistral folder: the own attention of its layers keeps the sliding window (each query its last
// 3 keys, itself included), where `full` on the same Q/K would see every earlier key.
TEST_F(CliModel, AMistralLayersOwnAttentionKeepsItsWindow) {
    LlamaSpec spec;
    spec.type = "mistral";
    spec.window = 3;
    writeLlamaFolder(m_dir / "mistral", spec);
    writeTinyTokenizerJson(m_dir / "mistral");
    const fs::path out = m_dir / "mistral.safetensors";
    const Outcome r = cli("run --model " + (m_dir / "mistral").string() + " --layer 1 --text 'the cat sat on the mat' --out " +
                          out.string() + " --summary " + (m_dir / "s.json").string());
    ASSERT_EQ(r.status, 0) << r.err;
    const auto summary = nlohmann::json::parse(slurp(m_dir / "s.json"));
    EXPECT_EQ(summary["model"]["family"], "mistral");
    EXPECT_NE(summary["model"]["attention"].get<std::string>().find("sliding window of 3 keys"), std::string::npos);
    auto result = readResultFile(out.string());
    ASSERT_TRUE(result.ok()) << result.error().message;
    const AttentionResult& own = result.value()->results.at(0);
    EXPECT_EQ(std::get<std::int64_t>(own.params.at("window")), 3);
    for (int h = 0; h < 4; ++h)
        for (std::int64_t i = 0; i < own.n; ++i) {
            double total = 0;
            for (std::int64_t j = 0; j < own.n; ++j) {
                const float w = own.weightAt(h, i, j);
                if (j > i || j < i - 2) EXPECT_EQ(w, 0.0f) << "head " << h << " " << i << "," << j;
                else EXPECT_GT(w, 0.0f);
                total += w;
            }
            EXPECT_NEAR(total, 1.0, 1e-5);
        }
}

TEST_F(CliModel, AnalyzeWritesTheAtlas) {
    const fs::path out = m_dir / "atlas.json";
    const Outcome r = cli("analyze --model " + (m_dir / "model").string() +
                          " --text 'the cat sat on the mat' --coverage longformer:window=1 --coverage topk:k=2 --quiet --out " +
                          out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    const auto atlas = nlohmann::json::parse(slurp(out));
    EXPECT_EQ(atlas["format"], "attnscope-atlas");
    EXPECT_EQ(atlas["n"], 8);
    ASSERT_EQ(atlas["heads"].size(), 8u);  // 2 layers x 4 heads
    ASSERT_EQ(atlas["coverage_settings"].size(), 2u);
    EXPECT_EQ(atlas["coverage_settings"][1]["label"], "topk k=2");
    for (const auto& head : atlas["heads"]) {
        const double kept = head["kept_mass"][0].get<double>();
        EXPECT_GT(kept, 0.0);
        EXPECT_LE(kept, 1.0 + 1e-6);
    }
    EXPECT_EQ(atlas["rollout"].size(), 8u);
}

TEST_F(CliModel, RefusalsAreOneLineErrors) {
    writeText(m_dir / "model" / "model.safetensors", "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 9\n");
    Outcome r = cli("run --model " + (m_dir / "model").string() + " --variant full --text 'the cat' --out " +
                    (m_dir / "x.safetensors").string());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("Git LFS pointer"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

    r = cli("analyze --model " + (m_dir / "nowhere").string() + " --text x --out " + (m_dir / "a.json").string());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("not a folder"), std::string::npos) << r.err;

    r = cli("analyze --model " + (m_dir / "model").string() + " --text x --coverage nonesuch --out " + (m_dir / "a.json").string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("unknown variant 'nonesuch'"), std::string::npos) << r.err;

    r = cli("run --layer 1 --variant full --text x --out " + (m_dir / "x.safetensors").string());
    EXPECT_EQ(r.status, 2) << "--layer needs --model";

    // number flags refuse NaN and infinities (NaN compares false with every bound)
    for (const char* bad : {"nan", "inf", "-inf"}) {
        r = cli("analyze --model " + (m_dir / "model").string() + " --text x --discard-ratio " + bad + " --out " + (m_dir / "a.json").string());
        EXPECT_EQ(r.status, 2) << bad;
        EXPECT_NE(r.err.find("not a finite number"), std::string::npos) << r.err;
    }
    r = cli("analyze --model " + (m_dir / "model").string() + " --text x --coverage longformer:window=1, --out " + (m_dir / "a.json").string());
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("empty entry"), std::string::npos) << r.err;
}

// --attention FILE: attention captured elsewhere, on its own tokens (no --text needed).
TEST_F(CliModel, CapturedAttentionRunsAndAnalyses) {
    PlainTensor q = PlainTensor::zeros(DType::F32, {2, 2, 3, 4});
    for (std::size_t i = 0; i < q.f32.size(); ++i) q.f32[i] = static_cast<float>((i * 37) % 11) / 11.0f - 0.5f;
    const fs::path file = m_dir / "captured.safetensors";
    ASSERT_TRUE(writeSafetensors(file.string(), {StWriteItem("q", &q), StWriteItem("k", &q), StWriteItem("v", &q)},
                                 {{"tokens", R"(["a", " b", " c"])"}, {"causal", "true"}})
                    .ok());
    const fs::path out = m_dir / "r.safetensors";
    Outcome r = cli("run --attention " + file.string() + " --layer 1 --variant full --param causal=true --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    auto result = SafetensorsFile::open(out.string());
    ASSERT_TRUE(result.ok()) << result.error().message;
    const auto tokens = nlohmann::json::parse(result.value()->header().metadata.at("attnscope.tokens"));
    ASSERT_EQ(tokens.size(), 3u);
    EXPECT_EQ(tokens[1]["text"], " b");
    r = cli("analyze --attention " + file.string() + " --coverage longformer:window=1 --quiet --out " + (m_dir / "a.json").string());
    ASSERT_EQ(r.status, 0) << r.err;
    const auto atlas = nlohmann::json::parse(slurp(m_dir / "a.json"));
    EXPECT_EQ(atlas["n"], 3);
    EXPECT_EQ(atlas["heads"].size(), 4u);
    r = cli("analyze --attention " + file.string() + " --model " + (m_dir / "model").string() + " --out " + (m_dir / "b.json").string());
    EXPECT_EQ(r.status, 2) << "--attention excludes --model";
}
