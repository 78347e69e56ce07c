// `attnscope-cli neuron` and `qkmap`: the neuron view's JSON from a result file — each key's products sum to
// its dot, its weight is `tile`'s for the same cell, and the weights are the softmax of the
// scores over the allowed keys; bad requests are refused naming the problem.

#include "cli_test_support.h"

#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <random>
#include <fstream>
#include <sstream>

using namespace attnscope::engine;

namespace {

// A causal `full` result on n = 12 tokens, 2 heads, d = 4.
std::string writeResult() {
    const std::string qkv = tempPath("neuron_qkv.safetensors"), out = tempPath("neuron_result.safetensors");
    std::mt19937 gen(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    const auto make = [&]() {
        std::vector<float> v(2 * 12 * 4);
        for (auto& x : v) x = dist(gen);
        return PlainTensor::fromF32({2, 12, 4}, v);
    };
    const PlainTensor q = make(), k = make(), v = make();
    EXPECT_TRUE(writeSafetensors(qkv, {{"q", &q}, {"k", &k}, {"v", &v}}, {}).ok());
    const auto r = runCli("run --variant full --causal --qkv " + qkv + " --out " + out + " --quiet");
    EXPECT_EQ(r.status, 0) << r.stderrText;
    return out;
}

}  // namespace

TEST(CliNeuron, TheTermsAddUpToTheTilesWeights) {
    const std::string result = writeResult();
    const auto r = runCli("neuron " + result + " --head 1 --query 7");
    ASSERT_EQ(r.status, 0) << r.stderrText;
    const auto j = nlohmann::json::parse(r.stdoutText);
    EXPECT_EQ(j.at("variant"), "full");
    EXPECT_EQ(j.at("query_vector").size(), 4u);
    ASSERT_EQ(j.at("keys").size(), 12u);
    const auto tile = runCli("tile " + result + " --head 1 --rows 7 --format csv");
    ASSERT_EQ(tile.status, 0) << tile.stderrText;
    std::vector<double> tileWeights;
    std::stringstream row(tile.stdoutText);
    for (std::string cell; std::getline(row, cell, ',');) tileWeights.push_back(std::stod(cell));
    ASSERT_EQ(tileWeights.size(), 12u);
    double sum = 0;
    for (const auto& key : j.at("keys")) {
        double dot = 0;
        for (double p : key.at("product")) dot += p;
        EXPECT_NEAR(dot, key.at("dot").get<double>(), 1e-5);
        const std::size_t index = key.at("index").get<std::size_t>();
        EXPECT_NEAR(key.at("weight").get<double>(), tileWeights[index], 1e-8);
        EXPECT_EQ(key.at("allowed").get<bool>(), index <= 7u);  // causal
        if (key.at("allowed").get<bool>()) sum += std::exp(key.at("score").get<double>());
    }
    for (const auto& key : j.at("keys")) {
        if (!key.at("allowed").get<bool>()) continue;
        EXPECT_NEAR(std::exp(key.at("score").get<double>()) / sum, key.at("weight").get<double>(), 2e-6);
    }

    const auto some = runCli("neuron " + result + " --query 3 --keys 1:3");
    ASSERT_EQ(some.status, 0) << some.stderrText;
    EXPECT_EQ(nlohmann::json::parse(some.stdoutText).at("keys").size(), 2u);
}

TEST(CliNeuron, RefusalsNameTheProblem) {
    const std::string result = writeResult();
    const auto query = runCli("neuron " + result + " --query 12");
    EXPECT_NE(query.status, 0);
    EXPECT_NE(query.stderrText.find("query 12"), std::string::npos) << query.stderrText;
    const auto keys = runCli("neuron " + result + " --query 0 --keys 5:x");
    EXPECT_NE(keys.status, 0);
    EXPECT_NE(keys.stderrText.find("--keys"), std::string::npos) << keys.stderrText;
    const auto which = runCli("neuron " + result + " --query 0 --result 3");
    EXPECT_NE(which.status, 0);
    EXPECT_NE(which.stderrText.find("--result 3"), std::string::npos) << which.stderrText;
    const auto missing = runCli("neuron " + tempPath("no_such_result.safetensors") + " --query 0");
    EXPECT_NE(missing.status, 0);
}

// `qkmap`: a CSV row per query and key, the tokens' text beside them; unknown methods refused.
TEST(CliQkMap, WritesEveryQueryAndKeyOfTheHead) {
    const std::string text = tempPath("qkmap_text.txt"), result = tempPath("qkmap_result.safetensors"),
                      map = tempPath("qkmap.csv");
    std::ofstream(text) << "the cat sat on the \"mat\" today";
    auto r = runCli("run --variant longformer --param window=2 --text-file " + text + " --out " + result + " --quiet");
    ASSERT_EQ(r.status, 0) << r.stderrText;
    r = runCli("qkmap " + result + " --head 1 --out " + map);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    EXPECT_NE(r.stdoutText.find("18 points"), std::string::npos) << r.stdoutText;
    std::ifstream in(map);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "kind,index,token,x,y");
    int queries = 0, keys = 0;
    bool quoted = false;
    while (std::getline(in, line)) {
        queries += line.rfind("query,", 0) == 0 ? 1 : 0;
        keys += line.rfind("key,", 0) == 0 ? 1 : 0;
        quoted = quoted || line.find(",\"\"\"\",") != std::string::npos;
    }
    EXPECT_EQ(queries, 9);  // the words tokenizer: the, cat, sat, on, the, ", mat, ", today
    EXPECT_EQ(keys, 9);
    EXPECT_TRUE(quoted);  // (the token " written as a quoted field with its quote doubled: """")
    const auto tsne = runCli("qkmap " + result + " --method tsne --seed 3 --perplexity 5 --out " + map);
    EXPECT_EQ(tsne.status, 0) << tsne.stderrText;
    EXPECT_NE(tsne.stdoutText.find("t-SNE (perplexity 5, seed 3)"), std::string::npos) << tsne.stdoutText;
    const auto umap = runCli("qkmap " + result + " --method umap --seed 2 --neighbors 5 --out " + map);
    EXPECT_EQ(umap.status, 0) << umap.stderrText;
    EXPECT_NE(umap.stdoutText.find("UMAP (5 neighbours, min_dist 0.1, seed 2)"), std::string::npos) << umap.stdoutText;
    const auto unknown = runCli("qkmap " + result + " --method isomap --out " + map);
    EXPECT_EQ(unknown.status, 2);
    EXPECT_NE(unknown.stderrText.find("pca, tsne or umap"), std::string::npos) << unknown.stderrText;
}
