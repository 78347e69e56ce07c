// `attnscope-cli context` (exBERT's context search) on the bundled copy model and a three-line
// corpus: the text's token finds itself where the corpus holds the same line (cosine 1, the same
// context), the keys' cosines equal those of the K that `run --model` writes, the index is kept
// beside the model and read back; and `neuron --model` gives what `neuron` gives on the layer's file.

#include "cli_test_support.h"

#include <attnscope/result_file.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

using namespace attnscope::engine;
namespace fs = std::filesystem;

namespace {

// A copy of the sample model (the index is kept beside it) and the corpus. Every line is shorter
// than the model's 19 positions, so each is one piece, run as the text alone would be.
struct ContextFixture : ::testing::Test {
    fs::path dir = fs::path(tempPath("context"));
    std::string model, corpus;
    void SetUp() override {
        fs::remove_all(dir);
        fs::create_directories(dir);
        fs::copy(fs::path(ATTNSCOPE_SOURCE_DIR) / "samples/copy-model", dir / "model");
        model = (dir / "model").string();
        corpus = (dir / "corpus.txt").string();
        std::ofstream(corpus) << "the dog ran\na cat sat\nbig red car\n";
    }
    void TearDown() override { fs::remove_all(dir); }
};

std::vector<float> keyVector(const RunResult& run, std::int64_t token) {
    const std::int64_t heads = run.k.shape[0], m = run.k.shape[1], d = run.k.shape[2];
    std::vector<float> out;
    for (std::int64_t h = 0; h < heads; ++h) out.insert(out.end(), run.k.data.get() + (h * m + token) * d, run.k.data.get() + (h * m + token + 1) * d);
    return out;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
    double dot = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        dot += double(a[i]) * b[i];
        aa += double(a[i]) * a[i];
        bb += double(b[i]) * b[i];
    }
    return dot / std::sqrt(aa * bb);
}

}  // namespace

TEST_F(ContextFixture, ATokenFindsItselfInTheSameLineAndTheIndexIsKept) {
    const std::string args = "context --model " + model + " --corpus " + corpus + " --text 'a cat sat' --token 3 --layer 1 --top 3 --quiet";
    const auto first = runCli(args);
    ASSERT_EQ(first.status, 0) << first.stderrText;
    const auto j = nlohmann::json::parse(first.stdoutText);
    EXPECT_FALSE(j.at("index").at("reused").get<bool>());
    const std::string kept = j.at("index").at("path");
    EXPECT_EQ(kept.rfind(model + "/attnscope-context/", 0), 0u) << kept;
    EXPECT_TRUE(fs::exists(kept));
    const auto& best = j.at("matches").at(0);
    EXPECT_NEAR(best.at("cosine").get<double>(), 1.0, 1e-6);
    EXPECT_EQ(best.at("text"), j.at("token").at("text"));
    EXPECT_EQ(best.at("before").get<std::string>() + best.at("text").get<std::string>() + best.at("after").get<std::string>(), "a cat sat");
    double previous = 2.0;
    for (const auto& match : j.at("matches")) {
        EXPECT_LE(match.at("cosine").get<double>(), previous);
        previous = match.at("cosine").get<double>();
        EXPECT_TRUE(match.contains("looked_at"));
    }
    const auto again = runCli(args);
    ASSERT_EQ(again.status, 0) << again.stderrText;
    const auto k = nlohmann::json::parse(again.stdoutText);
    EXPECT_TRUE(k.at("index").at("reused").get<bool>());
    EXPECT_EQ(k.at("matches"), j.at("matches"));
}

TEST_F(ContextFixture, KeyCosinesAreThoseOfTheModelsOwnKeys) {
    const std::string text = (dir / "text.safetensors").string(), line = (dir / "line.safetensors").string();
    ASSERT_EQ(runCli("run --model " + model + " --layer 1 --text 'a cat sat' --out " + text + " --quiet").status, 0);
    ASSERT_EQ(runCli("run --model " + model + " --layer 1 --text 'the dog ran' --out " + line + " --quiet").status, 0);
    auto textRun = readResultFile(text);
    auto lineRun = readResultFile(line);
    ASSERT_TRUE(textRun.ok() && lineRun.ok());
    const auto r = runCli("context --model " + model + " --corpus " + corpus + " --text 'a cat sat' --token 2 --layer 1 --space keys --top 100 --quiet");
    ASSERT_EQ(r.status, 0) << r.stderrText;
    const auto j = nlohmann::json::parse(r.stdoutText);
    const auto wanted = keyVector(**textRun, 2);
    int checked = 0;
    for (const auto& match : j.at("matches")) {
        const std::int64_t token = match.at("token");
        if (token >= (*lineRun)->n) continue;  // the first line's tokens are the index's first
        EXPECT_NEAR(match.at("cosine").get<double>(), cosine(wanted, keyVector(**lineRun, token)), 1e-5) << token;
        ++checked;
    }
    EXPECT_EQ(checked, (*lineRun)->n - 2) << "every token of the line but <s> and </s>";
}

TEST_F(ContextFixture, BadRequestsAreNamed) {
    auto r = runCli("context --model " + model + " --corpus " + corpus + " --text 'a cat' --token 40 --quiet");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.stderrText.find("token 40 is out of range"), std::string::npos) << r.stderrText;
    r = runCli("context --model " + model + " --corpus " + corpus + " --text 'a cat' --token 1 --layer 9 --quiet");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.stderrText.find("--layer 9"), std::string::npos) << r.stderrText;
    r = runCli("context --model " + model + " --corpus " + (dir / "none.txt").string() + " --text 'a cat' --token 1 --quiet");
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.stderrText.find("none.txt"), std::string::npos) << r.stderrText;
    r = runCli("context --model " + model + " --corpus " + corpus + " --token 1");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.stderrText.find("--text"), std::string::npos) << r.stderrText;
}

TEST_F(ContextFixture, NeuronOfAModelLayerIsNeuronOfItsFile) {
    const std::string file = (dir / "layer.safetensors").string();
    ASSERT_EQ(runCli("run --model " + model + " --layer 1 --text 'the cat' --out " + file + " --quiet").status, 0);
    const auto fromFile = runCli("neuron " + file + " --head 2 --query 3");
    const auto fromModel = runCli("neuron --model " + model + " --layer 1 --text 'the cat' --head 2 --query 3");
    ASSERT_EQ(fromFile.status, 0) << fromFile.stderrText;
    ASSERT_EQ(fromModel.status, 0) << fromModel.stderrText;
    EXPECT_EQ(nlohmann::json::parse(fromModel.stdoutText), nlohmann::json::parse(fromFile.stdoutText));
    const auto alone = runCli("neuron --text 'the cat' --query 1");
    EXPECT_EQ(alone.status, 2);
    EXPECT_NE(alone.stderrText.find("--model"), std::string::npos) << alone.stderrText;
}
