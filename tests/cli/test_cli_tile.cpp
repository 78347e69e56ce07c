// Tiles from result files: `attnscope-cli tile` against the engine's reader, and the numpy snippet
// docs/tile_from_result.py (run when numpy is there) against both, for every variant.

#include "cli_test_support.h"

#include <attnscope/result_file.h>
#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <random>

using namespace attnscope::engine;

namespace {

struct SnippetCase {
    std::string variant;
    std::string params;  ///< --param flags
};

std::vector<SnippetCase> snippetCases() {
    return {
        {"full", "--causal"},
        {"longformer", "--param window=3 --param global=0,11"},
        {"sparse_strided", "--param stride=5"},
        {"sparse_fixed", "--param block=6 --param summary=2 --param causal=false"},
        {"bigbird", "--param block=3 --param random=2"},
        {"star", "--param cyclic=true"},
        {"topk", "--param k=4"},
        {"entmax", "--param alpha=1.5"},
        {"linear", "--causal"},
        {"performer", "--param nb_features=16"},
        {"linformer", "--param k=7"},
        {"reformer", "--param n_buckets=4 --param n_hashes=3 --param chunk_len=6"},
        {"routing", "--param clusters=4 --param window_size=8"},
        {"routing", "--param clusters=3 --param mode=argmax --causal"},
    };
}

// A qkv file with n = 30 tokens, 2 heads, d = 8; key 5 padded.
std::string writeQkv() {
    const std::string path = tempPath("snippet_qkv.safetensors");
    std::mt19937 gen(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    const auto make = [&]() {
        std::vector<float> v(2 * 30 * 8);
        for (auto& x : v) x = dist(gen);
        return PlainTensor::fromF32({2, 30, 8}, v);
    };
    const PlainTensor q = make(), k = make(), v = make();
    std::vector<std::uint8_t> pad(30, 0);
    pad[5] = 1;
    const PlainTensor padding = PlainTensor::fromU8({30}, pad);
    EXPECT_TRUE(writeSafetensors(path, {{"q", &q}, {"k", &k}, {"v", &v}, {"key_padding", &padding}}, {}).ok());
    return path;
}

// A python3 with numpy: the one on PATH, else the system's (setup.sh installs python3-numpy there).
std::string pythonWithNumpy() {
    for (const std::string python : {"python3", "/usr/bin/python3"})
        if (std::system((python + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) return python;
    return {};
}

}  // namespace

TEST(CliTile, PrintsTheEnginesTileAndRefusesBadRectangles) {
    const std::string qkv = writeQkv(), out = tempPath("tile.safetensors");
    ASSERT_EQ(runCli("run --variant longformer --param window=2 --qkv " + qkv + " --dense-limit 0 --out " + out).status, 0);
    auto r = runCli("tile " + out + " --head 1 --rows 3:6 --keys 0:9");
    ASSERT_EQ(r.status, 0) << r.stderrText;
    const auto j = nlohmann::json::parse(r.stdoutText);
    auto back = readResultFile(out);
    ASSERT_TRUE(back.ok()) << back.error().message;
    const WeightTile t = (*back)->results[0].weights->tile(1, 3, 6, 0, 9);
    for (int i = 0; i < 3; ++i)
        for (int c = 0; c < 9; ++c) EXPECT_EQ(j["weights"][i][c].get<float>(), t.weights[static_cast<std::size_t>(i * 9 + c)]);
    EXPECT_EQ(j["reasons"][0][3], nlohmann::json::array({"local"}));
    EXPECT_EQ(j["reasons"][0][0], nlohmann::json::array());
    for (const std::string bad : {"--rows 5:2", "--rows 0:31", "--head 2", "--keys x"}) {
        auto refused = runCli("tile " + out + " " + bad);
        EXPECT_EQ(refused.status, 2) << bad;
        EXPECT_EQ(refused.stdoutText, "") << bad;
        EXPECT_NE(refused.stderrText.find("attnscope-cli: error:"), std::string::npos) << bad;
    }
    EXPECT_EQ(runCli("tile " + tempPath("missing.safetensors")).status, 1);
}

TEST(CliTile, NumpySnippetRecomputesEveryVariantsTileFromTheFileAlone) {
    const std::string python = pythonWithNumpy();
    if (python.empty()) GTEST_SKIP() << "python3 with numpy is not installed";
    const std::string qkv = writeQkv(), out = tempPath("snippet.safetensors");
    const std::string snippet = std::string(ATTNSCOPE_SOURCE_DIR) + "/docs/tile_from_result.py";
    for (const SnippetCase& c : snippetCases()) {
        SCOPED_TRACE(c.variant + " " + c.params);
        // dense tensors left out: the snippet reads the listing, the statistics and the draws
        auto run = runCli("run --variant " + c.variant + " " + c.params + " --qkv " + qkv +
                          " --dense-limit 0 --write-pattern --out " + out);
        ASSERT_EQ(run.status, 0) << run.stderrText;
        for (int head : {0, 1}) {
            const std::string command = python + " " + snippet + " " + out + " " + std::to_string(head) + " 0 30 0 30";
            const std::string stdoutPath = tempPath("snippet_out.json");
            ASSERT_EQ(std::system((command + " >" + stdoutPath).c_str()), 0) << command;
            const auto j = nlohmann::json::parse(slurp(stdoutPath));
            auto back = readResultFile(out);
            ASSERT_TRUE(back.ok()) << back.error().message;
            const AttentionResult& res = (*back)->results[0];
            const WeightTile t = res.weights->tile(head, 0, 30, 0, 30);
            double worst = 0;
            for (int i = 0; i < 30; ++i)
                for (int k = 0; k < 30; ++k)
                    worst = std::max(worst, std::abs(j["weights"][i][k].get<double>() - t.weights[static_cast<std::size_t>(i * 30 + k)]));
            EXPECT_LT(worst, 1e-5) << "head " << head;
        }
    }
}

// The sweep runs every (variant, n) in a child process and writes its table; a size over the
// budget is skipped and said so, the others still run.
TEST(CliSweep, WritesTheTableAndSkipsSizesOverBudget) {
    const std::string csv = tempPath("sweep.csv"), md = tempPath("sweep.md");
    // 1 MB: every run at n = 64 fits; at n = 4096 full's block of scores (256 x 4096 floats) does
    // not, while the pattern variants' scratch does
    auto r = runCli("sweep --variants longformer:window=4,sparse_strided:stride=8,bigbird:block=7 --n 64,4096 --heads 2 --head-dim 8"
                    " --memory-budget 1000000 --out " + csv + " --markdown " + md);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    const std::string table = slurp(csv);
    EXPECT_EQ(table.rfind("variant,n,status,wall_s,peak_rss_mib,speedup_vs_full,memory_vs_full,note\n", 0), 0u) << table;
    EXPECT_NE(table.find("\"full\",64,ok,"), std::string::npos) << table;
    EXPECT_NE(table.find("\"longformer:window=4\",64,ok,"), std::string::npos) << table;
    EXPECT_NE(table.find("\"full\",4096,over budget"), std::string::npos) << table;
    EXPECT_NE(table.find("\"sparse_strided:stride=8\",4096,ok,"), std::string::npos) << table;
    EXPECT_NE(slurp(md).find("| longformer:window=4 | 64 |"), std::string::npos);
    EXPECT_NE(r.stderrText.find("sweep: [8/8]"), std::string::npos) << r.stderrText;
    // A run that fails says why, in the CSV's note and under the Markdown table.
    EXPECT_NE(table.find("\"bigbird:block=7\",64,failed,,,,,\"attnscope-cli: error: "), std::string::npos) << table;
    EXPECT_NE(slurp(md).find("| bigbird:block=7 | 64 | failed [2] |"), std::string::npos) << slurp(md);
    EXPECT_NE(slurp(md).find("[2] bigbird:block=7, n = 64: attnscope-cli: error: "), std::string::npos) << slurp(md);
    // Parameters the schema refuses stop the sweep before anything runs, naming the parameter.
    std::remove(csv.c_str());
    const auto refused = runCli("sweep --variants longformer,bigbird:block=0 --n 64 --out " + csv);
    EXPECT_EQ(refused.status, 2);
    EXPECT_NE(refused.stderrText.find("bigbird:block=0: parameter 'block'"), std::string::npos) << refused.stderrText;
    EXPECT_NE(runCli("sweep --variants longformr --n 64 --out " + csv).stderrText.find("unknown variant 'longformr'"), std::string::npos);
    EXPECT_FALSE(std::ifstream(csv).good());
    EXPECT_NE(r.stderrText.find("over budget"), std::string::npos) << r.stderrText;
    // bad specs are usage errors, an empty entry after a trailing comma too
    EXPECT_EQ(runCli("sweep --variants =3 --n 64 --out " + csv).status, 2);
    EXPECT_EQ(runCli("sweep --variants full --n 0 --out " + csv).status, 2);
    const auto trailing = runCli("sweep --variants full, --n 64 --out " + csv);
    EXPECT_EQ(trailing.status, 2);
    EXPECT_NE(trailing.stderrText.find("--variants has an empty entry"), std::string::npos) << trailing.stderrText;
    EXPECT_EQ(runCli("sweep --variants full --n 64, --out " + csv).status, 2);
    // inputs over the budget are skipped before they are made: three 8 GiB tensors are never built
    const auto huge = runCli("sweep --variants full --n 16777216 --memory-budget 1000000 --out " + csv);
    EXPECT_EQ(huge.status, 0) << huge.stderrText;
    EXPECT_NE(slurp(csv).find("\"full\",16777216,over budget"), std::string::npos) << slurp(csv);
    EXPECT_NE(slurp(csv).find("its q, k, v take"), std::string::npos) << slurp(csv);
}

// A result file whose summary contradicts its tensors (m = 12 over a k of 6 keys, tokens that are
// not n) is refused by the reader with the rule broken: `tile` exits with one line, never aborts.
TEST(CliTile, AResultFileThatContradictsItselfIsRefused) {
    const std::string qkv = tempPath("contradict_qkv.safetensors"), result = tempPath("contradict.safetensors");
    std::mt19937 gen(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> values(2 * 6 * 4);
    for (auto& x : values) x = dist(gen);
    const PlainTensor t = PlainTensor::fromF32({2, 6, 4}, values);
    ASSERT_TRUE(writeSafetensors(qkv, {{"q", &t}, {"k", &t}, {"v", &t}}, {}).ok());
    ASSERT_EQ(runCli("run --qkv " + qkv + " --variant topk --param k=2 --out " + result).status, 0);
    const auto rewrite = [&](const std::string& key, const std::function<void(nlohmann::json&)>& change) {
        auto file = SafetensorsFile::open(result);
        EXPECT_TRUE(file.ok());
        std::map<std::string, PlainTensor> tensors;
        for (const auto& info : (*file)->header().tensors) tensors[info.name] = (*file)->read(info.name).value();
        auto metadata = (*file)->header().metadata;
        nlohmann::json j = nlohmann::json::parse(metadata.at(key));
        change(j);
        metadata[key] = j.dump();
        std::vector<StWriteItem> items;
        for (const auto& [name, tensor] : tensors) items.emplace_back(name, &tensor);
        const std::string out = tempPath("contradict_bad.safetensors");
        EXPECT_TRUE(writeSafetensors(out, items, metadata).ok());
        return out;
    };
    const std::string wider = rewrite("attnscope.result", [](nlohmann::json& j) { j["m"] = 12; });
    auto r = runCli("tile " + wider + " --head 0");
    EXPECT_EQ(r.status, 1) << r.stderrText;
    EXPECT_NE(r.stderrText.find("tensor 'k' is [2, 6, 4], but the summary says [heads, m, head_dim] = [2, 12, 4]"),
              std::string::npos)
        << r.stderrText;
    EXPECT_EQ(std::count(r.stderrText.begin(), r.stderrText.end(), '\n'), 1) << r.stderrText;
    const std::string taller = rewrite("attnscope.result", [](nlohmann::json& j) { j["n"] = 9; });
    r = runCli("tile " + taller + " --head 0");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.stderrText.find("tensor 'q' is [2, 6, 4]"), std::string::npos) << r.stderrText;
}

// A large tile is printed a band of rows at a time: the JSON is the same as the small one's.
TEST(CliTile, TilesAreStreamedAsTheSameJson) {
    const std::string qkv = writeQkv(), result = tempPath("stream.safetensors");
    ASSERT_EQ(runCli("run --qkv " + qkv + " --variant longformer --param window=3 --out " + result).status, 0);
    auto whole = runCli("tile " + result + " --head 1 --rows 0:30 --keys 0:30");
    ASSERT_EQ(whole.status, 0) << whole.stderrText;
    const auto j = nlohmann::json::parse(whole.stdoutText);
    EXPECT_EQ(j["rows"], nlohmann::json::array({0, 30}));
    ASSERT_EQ(j["weights"].size(), 30u);
    ASSERT_EQ(j["reasons"].size(), 30u);
    auto read = readResultFile(result);
    ASSERT_TRUE(read.ok());
    const AttentionResult& r = read.value()->results[0];
    for (int i = 0; i < 30; ++i)
        for (int k = 0; k < 30; ++k) {
            EXPECT_FLOAT_EQ(j["weights"][i][k].get<float>(), r.weightAt(1, i, k));
            EXPECT_EQ(j["reasons"][i][k].empty(), r.weights->tile(1, i, i + 1, k, k + 1, true).reasons[0] == 0);
        }
}
