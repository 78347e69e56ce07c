// attnscope-cli end to end: flags, result file contents, summary, and one-line errors.

#include "cli_test_support.h"

#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/wait.h>

using namespace attnscope::engine;

namespace {

int lineCount(const std::string& text) {
    int lines = 0;
    for (char c : text) lines += c == '\n';
    return lines;
}

// softmax(q k^T / sqrt(d)) v in double precision, written independently of the engine.
void reference(const PlainTensor& q, const PlainTensor& k, const PlainTensor& v, bool causal,
               std::vector<double>& weights, std::vector<double>& output) {
    const auto h = q.shape[0], n = q.shape[1], d = q.shape[2];
    weights.assign(static_cast<std::size_t>(h * n * n), 0.0);
    output.assign(static_cast<std::size_t>(h * n * d), 0.0);
    for (std::int64_t a = 0; a < h; ++a)
        for (std::int64_t i = 0; i < n; ++i) {
            std::vector<double> s(static_cast<std::size_t>(n));
            double mx = -1e300, sum = 0;
            const std::int64_t last = causal ? i : n - 1;
            for (std::int64_t j = 0; j <= last; ++j) {
                double dot = 0;
                for (std::int64_t c = 0; c < d; ++c) dot += double(q.f32[(a * n + i) * d + c]) * k.f32[(a * n + j) * d + c];
                s[j] = dot / std::sqrt(double(d));
                mx = std::max(mx, s[j]);
            }
            for (std::int64_t j = 0; j <= last; ++j) sum += std::exp(s[j] - mx);
            for (std::int64_t j = 0; j <= last; ++j) {
                const double w = std::exp(s[j] - mx) / sum;
                weights[(a * n + i) * n + j] = w;
                for (std::int64_t c = 0; c < d; ++c) output[(a * n + i) * d + c] += w * v.f32[(a * n + j) * d + c];
            }
        }
}

}  // namespace

TEST(Cli, VariantsJsonListsSchemas) {
    auto r = runCli("variants --json");
    ASSERT_EQ(r.status, 0) << r.stderrText;
    auto j = nlohmann::json::parse(r.stdoutText);
    ASSERT_TRUE(j.is_array());
    bool found = false;
    for (const auto& v : j)
        if (v["id"] == "full") {
            found = true;
            EXPECT_EQ(v["params"][0]["name"], "causal");
            EXPECT_EQ(v["params"][0]["type"], "bool");
        }
    EXPECT_TRUE(found);
}

TEST(Cli, FullOnExplicitQkvMatchesSoftmaxDefinition) {
    const std::int64_t h = 2, n = 37, d = 12;
    PlainTensor q = randomTensor(h, n, d, 11), k = randomTensor(h, n, d, 12), v = randomTensor(h, n, d, 13);
    const std::string input = tempPath("qkv.safetensors");
    ASSERT_TRUE(writeSafetensors(input, {{"q", &q}, {"k", &k}, {"v", &v}}, {}).ok());
    for (bool causal : {false, true}) {
        const std::string out = tempPath(causal ? "causal.safetensors" : "bidir.safetensors");
        const std::string summary = tempPath("summary.json");
        auto r = runCli("run --variant full --qkv " + input + (causal ? " --causal" : "") + " --out " + out +
                        " --summary " + summary + " --write-pattern");
        ASSERT_EQ(r.status, 0) << r.stderrText;
        auto file = SafetensorsFile::open(out);
        ASSERT_TRUE(file.ok()) << file.error().message;
        auto output = (*file)->read("output");
        auto weights = (*file)->read("weights");
        auto mask = (*file)->read("mask");
        ASSERT_TRUE(output.ok() && weights.ok() && mask.ok());
        EXPECT_EQ(output->shape, (std::vector<std::int64_t>{h, n, d}));
        EXPECT_EQ(weights->shape, (std::vector<std::int64_t>{h, n, n}));
        std::vector<double> refW, refO;
        reference(q, k, v, causal, refW, refO);
        for (std::size_t i = 0; i < refW.size(); ++i) ASSERT_NEAR(weights->f32[i], refW[i], 1e-5) << i;
        for (std::size_t i = 0; i < refO.size(); ++i) ASSERT_NEAR(output->f32[i], refO[i], 1e-5) << i;
        for (std::int64_t a = 0; a < h; ++a)
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    EXPECT_EQ(mask->u8[static_cast<std::size_t>((a * n + i) * n + j)], causal ? (j <= i ? 1 : 0) : 1);
        auto rowPtr = (*file)->read("pattern.row_ptr");
        auto colIdx = (*file)->read("pattern.col_idx");
        auto reason = (*file)->read("pattern.reason");
        ASSERT_TRUE(rowPtr.ok() && colIdx.ok() && reason.ok());
        // one row per (head, query), head-major
        EXPECT_EQ(rowPtr->shape, (std::vector<std::int64_t>{h * n + 1}));
        EXPECT_EQ(rowPtr->i64.back(), h * (causal ? n * (n + 1) / 2 : n * n));
        EXPECT_EQ(reason->u8[0], causal ? 1 : 0);

        auto s = nlohmann::json::parse(slurp(summary));
        for (const char* key : {"variant", "params", "n", "heads", "head_dim", "seconds", "peak_bytes", "flops"})
            EXPECT_TRUE(s.contains(key)) << key;
        EXPECT_EQ(s["variant"], "full");
        EXPECT_EQ(s["n"], n);
        EXPECT_EQ(s["params"]["causal"], causal);
        EXPECT_GT(s["flops"].get<double>(), 0.0);
        const auto meta = (*file)->header().metadata;
        ASSERT_TRUE(meta.count("attnscope.request"));
        EXPECT_EQ(nlohmann::json::parse(meta.at("attnscope.result"))["variant"], "full");
    }
}

TEST(Cli, TextRunStoresTokensWithByteSpans) {
    const std::string out = tempPath("text.safetensors");
    auto r = runCli("run --variant full --text 'Attention, please!' --heads 2 --head-dim 8 --seed 5 --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    auto file = SafetensorsFile::open(out);
    ASSERT_TRUE(file.ok());
    auto tokens = nlohmann::json::parse((*file)->header().metadata.at("attnscope.tokens"));
    ASSERT_EQ(tokens.size(), 4u);
    EXPECT_EQ(tokens[0]["text"], "Attention");
    EXPECT_EQ(tokens[1]["begin"], 9);
    EXPECT_EQ(tokens[3]["text"], "!");
    EXPECT_EQ(tokens[3]["end"], 18);
    auto request = nlohmann::json::parse((*file)->header().metadata.at("attnscope.request"));
    EXPECT_EQ(request["projection"]["seed"], 5);
    EXPECT_FALSE(request["projection"].contains("qk_norm"));  // only when asked
    auto weights = (*file)->read("weights");
    ASSERT_TRUE(weights.ok());
    for (int row = 0; row < 2 * 4; ++row) {
        double sum = 0;
        for (int j = 0; j < 4; ++j) sum += weights->f32[static_cast<std::size_t>(row * 4 + j)];
        EXPECT_NEAR(sum, 1.0, 1e-6);
    }
}

TEST(Cli, DenseLimitLeavesOutDenseTensors) {
    const std::string out = tempPath("limit.safetensors");
    auto r = runCli("run --variant full --text 'one two three four five six' --dense-limit 4 --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    auto file = SafetensorsFile::open(out);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ((*file)->find("weights"), nullptr);
    EXPECT_EQ((*file)->find("mask"), nullptr);
    EXPECT_NE((*file)->find("output"), nullptr);
    EXPECT_NE(r.stderrText.find("dense limit"), std::string::npos);
}

TEST(Cli, ErrorsAreOneLineAndNonZero) {
    const std::string out = tempPath("err.safetensors");
    struct Case {
        std::string args;
        int status;
        std::string needle;
    };
    const std::string badUtf8 = tempPath("bad.txt");
    { std::ofstream(badUtf8, std::ios::binary) << "fine text \xFF oops"; }
    const std::string badSt = tempPath("bad.safetensors");
    { std::ofstream(badSt, std::ios::binary) << std::string("\x08\0\0\0\0\0\0\0{}      ", 16) << "x"; }
    std::vector<Case> cases = {
        {"run --variant nope --text hi --out " + out, 2, "unknown variant 'nope'"},
        {"run --variant full --param window=3 --text hi --out " + out, 2, "has no parameter 'window'"},
        {"run --variant full --param causal=maybe --text hi --out " + out, 2, "true or false"},
        {"run --variant full --param causal --text hi --out " + out, 2, "NAME=VALUE"},
        {"run --variant full --text-file " + badUtf8 + " --out " + out, 1, "byte offset 10"},
        {"run --variant full --qkv " + badSt + " --out " + out, 1, "MetadataIncompleteBuffer"},
        {"run --variant full --qkv /nonexistent/q.safetensors --out " + out, 1, "/nonexistent/q.safetensors"},
        {"run --variant full --text 'a b c d e f g h' --memory-budget 100 --out " + out, 1, "bytes"},
        {"run --variant full --text hi --heads 0 --out " + out, 2, "heads"},
        {"run --variant full --out " + out, 2, "input"},
        {"run --variant full --text hi --seed 1000000000000000000000000000000 --out " + out, 2, "the seed"},
        {"run --variant full --text hi --seed -1 --out " + out, 2, "the seed"},
        {"run --variant full --text hi --memory-budget 0 --out " + out, 2, "at least 1"},
        {"run --variant full --text hi --memory-budget -1 --out " + out, 2, "memory budget"},
        {"run --variant full --text hi --out /nonexistent/r.safetensors", 1, "/nonexistent does not exist"},
        {"run --variant full --text hi --out " + ::testing::TempDir(), 1, "is a folder"},
        {"sweep --variants full --n 16 --out /nonexistent/s.csv", 1, "/nonexistent does not exist"},
    };
    for (const auto& c : cases) {
        auto r = runCli(c.args);
        EXPECT_EQ(r.status, c.status) << c.args << "\n" << r.stderrText;
        EXPECT_EQ(lineCount(r.stderrText), 1) << c.args << "\n" << r.stderrText;
        EXPECT_NE(r.stderrText.find(c.needle), std::string::npos) << c.args << "\n" << r.stderrText;
    }
}

TEST(Cli, AFailedCommandLeavesNoOutputFiles) {
    // The summary cannot be written (a missing folder; a folder's name): no result file either.
    const std::string out = tempPath("left.safetensors");
    for (const std::string& summary : {std::string("/nonexistent/s.json"), ::testing::TempDir()}) {
        std::remove(out.c_str());
        auto r = runCli("run --variant full --text 'a b c' --out " + out + " --summary " + summary);
        EXPECT_EQ(r.status, 1) << r.stderrText;
        EXPECT_EQ(lineCount(r.stderrText), 1) << r.stderrText;
        EXPECT_FALSE(std::ifstream(out).good()) << "left behind with --summary " << summary;
    }
    // Both written when both can be.
    const std::string summary = tempPath("both.json");
    std::remove(summary.c_str());
    auto ok = runCli("run --variant full --text 'a b c' --out " + out + " --summary " + summary);
    ASSERT_EQ(ok.status, 0) << ok.stderrText;
    EXPECT_TRUE(std::ifstream(out).good());
    EXPECT_EQ(nlohmann::json::parse(slurp(summary))["variant"], "full");
}

TEST(Cli, AutomaticParametersRecordTheValueUsed) {
    // 0 = automatic, as each schema says: the result's parameters hold what ran.
    const std::string summary = tempPath("auto.json"), out = tempPath("auto.safetensors");
    const struct {
        std::string args, param;
        std::int64_t used;
    } cases[] = {
        {"--variant performer --param nb_features=0 --head-dim 16", "nb_features", 44},  // floor(16 ln 16)
        {"--variant routing --param clusters=0 --param window_size=0", "clusters", 3},    // round(sqrt(9))
        {"--variant reformer --param n_buckets=0 --param chunk_len=4", "n_buckets", 2},
    };
    for (const auto& c : cases) {
        auto r = runCli("run " + c.args + " --text 'a b c d e f g h i' --quiet --out " + out + " --summary " + summary);
        ASSERT_EQ(r.status, 0) << c.args << "\n" << r.stderrText;
        EXPECT_EQ(nlohmann::json::parse(slurp(summary))["params"][c.param], c.used) << c.args;
    }
}

TEST(Cli, TransformerXlTakesItsParametersFromTheQkvFile) {
    // u = v = 0 and r = 0 given in the file: the scores are q·k / sqrt(d) over the keys of
    // segment memory (L = 4, M = 3), which a masked softmax written here reproduces.
    const std::int64_t h = 2, n = 11, d = 4, L = 4, M = 3;
    PlainTensor q = randomTensor(h, n, d, 21), k = randomTensor(h, n, d, 22), v = randomTensor(h, n, d, 23);
    PlainTensor u = PlainTensor::zeros(DType::F32, {h, d}), pos = PlainTensor::zeros(DType::F32, {h, M + L, d});
    const std::string input = tempPath("xl_qkv.safetensors");
    ASSERT_TRUE(writeSafetensors(input, {{"q", &q}, {"k", &k}, {"v", &v}, {"r_w_bias", &u}, {"r_r_bias", &u}, {"pos_keys", &pos}}, {}).ok());
    const std::string out = tempPath("xl_out.safetensors");
    auto r = runCli("run --variant transformer_xl --param segment=4 --param memory=3 --qkv " + input + " --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    auto file = SafetensorsFile::open(out);
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto weights = (*file)->read("weights");
    auto keptPos = (*file)->read("transformer_xl.pos_keys");
    ASSERT_TRUE(weights.ok() && keptPos.ok());
    EXPECT_EQ(keptPos->shape, (std::vector<std::int64_t>{h, M + L, d}));
    for (std::int64_t a = 0; a < h; ++a)
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t first = std::max<std::int64_t>(0, i / L * L - M);
            double mx = -1e300, sum = 0;
            std::vector<double> s(static_cast<std::size_t>(n));
            for (std::int64_t j = first; j <= i; ++j) {
                double dot = 0;
                for (std::int64_t c = 0; c < d; ++c) dot += double(q.f32[(a * n + i) * d + c]) * k.f32[(a * n + j) * d + c];
                s[j] = dot / std::sqrt(double(d));
                mx = std::max(mx, s[j]);
            }
            for (std::int64_t j = first; j <= i; ++j) sum += std::exp(s[j] - mx);
            for (std::int64_t j = 0; j < n; ++j)
                ASSERT_NEAR(weights->f32[(a * n + i) * n + j], j >= first && j <= i ? std::exp(s[j] - mx) / sum : 0.0, 1e-5)
                    << a << " " << i << " " << j;
        }

    // a pos_keys tensor too short for memory + segment: refused naming it, no result left behind
    PlainTensor shortPos = PlainTensor::zeros(DType::F32, {h, M + L - 1, d});
    const std::string bad = tempPath("xl_bad.safetensors"), badOut = tempPath("xl_bad_out.safetensors");
    ASSERT_TRUE(writeSafetensors(bad, {{"q", &q}, {"k", &k}, {"v", &v}, {"r_w_bias", &u}, {"r_r_bias", &u}, {"pos_keys", &shortPos}}, {}).ok());
    std::remove(badOut.c_str());
    auto refused = runCli("run --variant transformer_xl --param segment=4 --param memory=3 --qkv " + bad + " --out " + badOut);
    EXPECT_NE(refused.status, 0);
    EXPECT_NE(refused.stderrText.find("pos_keys"), std::string::npos) << refused.stderrText;
    EXPECT_EQ(lineCount(refused.stderrText), 1) << refused.stderrText;
    EXPECT_FALSE(std::ifstream(badOut).good());
}

// --qk-norm rescales every query and key row before the variant runs, and the request says so:
// the written q rows have that norm.
TEST(Cli, QkNormRescalesQueriesAndKeysAndIsRecorded) {
    const std::string out = tempPath("qknorm.safetensors");
    auto r = runCli("run --variant full --text 'the cat sat on the mat' --heads 2 --head-dim 8 --qk-norm 1.5 --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    auto file = SafetensorsFile::open(out);
    ASSERT_TRUE(file.ok());
    auto request = nlohmann::json::parse((*file)->header().metadata.at("attnscope.request"));
    EXPECT_DOUBLE_EQ(request["projection"]["qk_norm"].get<double>(), 1.5);
    auto q = (*file)->read("q");
    ASSERT_TRUE(q.ok()) << q.error().message;
    const std::int64_t d = q->shape.back();
    for (std::int64_t row = 0; row < q->numel() / d; ++row) {
        double sq = 0;
        for (std::int64_t c = 0; c < d; ++c) sq += double(q->f32[static_cast<std::size_t>(row * d + c)]) * q->f32[static_cast<std::size_t>(row * d + c)];
        EXPECT_NEAR(std::sqrt(sq), 1.5, 1e-5) << "row " << row;
    }
    auto bad = runCli("run --variant full --text 'x' --qk-norm -1 --out " + tempPath("bad.safetensors"));
    EXPECT_EQ(bad.status, 2);
}
