// attnscope-cli route end to end: the worked example from a router_logits file, hidden · routerᵀ
// from a file, a text under a seeded router, and refusals.

#include "cli_test_support.h"
#include "../support/tiny_llama.h"
#include "../support/tiny_model.h"
#include "../support/tiny_switch_transformers.h"

#include <attnscope/moe_router.h>
#include <attnscope/safetensors.h>
#include <attnscope/tokenize.h>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace attnscope::engine;

TEST(CliRoute, WorkedExampleFromRouterLogits) {
    // 8 tokens choose experts 0 0 0 1 1 2 0 3 (margins 1 3 2 1 1 1 4 1); capacity factor 1 gives 2.
    const int first[] = {0, 0, 0, 1, 1, 2, 0, 3};
    const float margin[] = {1, 3, 2, 1, 1, 1, 4, 1};
    PlainTensor logits = PlainTensor::zeros(DType::F32, {8, 4});
    for (int t = 0; t < 8; ++t) logits.f32[t * 4 + first[t]] = margin[t];
    const std::string input = tempPath("route_logits.safetensors"), out = tempPath("route.safetensors"),
                      summary = tempPath("route.json");
    ASSERT_TRUE(writeSafetensors(input, {{"router_logits", &logits}}, {}).ok());
    for (const char* priority : {"sequence", "gate"}) {
        auto r = runCli("route --input " + input + " --capacity-factor 1 --priority " + std::string(priority) + " --out " + out +
                        " --summary " + summary);
        ASSERT_EQ(r.status, 0) << r.stderrText;
        auto file = SafetensorsFile::open(out);
        ASSERT_TRUE(file.ok()) << file.error().message;
        auto kept = (*file)->read("moe.kept");
        auto position = (*file)->read("moe.position");
        auto expert = (*file)->read("moe.expert");
        ASSERT_TRUE(kept.ok() && position.ok() && expert.ok());
        EXPECT_EQ(kept->shape, (std::vector<std::int64_t>{8, 1}));
        EXPECT_EQ(expert->i64, (std::vector<std::int64_t>{0, 0, 0, 1, 1, 2, 0, 3}));
        EXPECT_EQ(kept->u8, std::string(priority) == "sequence" ? (std::vector<std::uint8_t>{1, 1, 0, 1, 1, 1, 0, 1})
                                                   : (std::vector<std::uint8_t>{0, 1, 0, 1, 1, 1, 1, 1}));
        const auto s = nlohmann::json::parse(slurp(summary));
        EXPECT_EQ(s["expert_capacity"], 2);
        EXPECT_EQ(s["dropped"], 2);
        for (const char* name : {"moe.router_logits", "moe.router_probs", "moe.gate", "moe.expert_counts", "moe.kept_counts"})
            EXPECT_NE((*file)->find(name), nullptr) << name;
    }
}

// --csv: one row per (token, choice), the worked example's drops at capacity 2 (sequence priority:
// tokens 2 and 6 lose expert 0's two slots to tokens 0 and 1); the gate of top-1 is the router
// probability softmax(margin, 0, 0, 0)[chosen] = e^m / (e^m + 3).
TEST(CliRoute, CsvListsEveryChoiceWithItsSlotAndWhetherItWasKept) {
    const int first[] = {0, 0, 0, 1, 1, 2, 0, 3};
    const float margin[] = {1, 3, 2, 1, 1, 1, 4, 1};
    PlainTensor logits = PlainTensor::zeros(DType::F32, {8, 4});
    for (int t = 0; t < 8; ++t) logits.f32[t * 4 + first[t]] = margin[t];
    const std::string input = tempPath("route_csv_logits.safetensors"), out = tempPath("route_csv.safetensors"),
                      csv = tempPath("route.csv");
    ASSERT_TRUE(writeSafetensors(input, {{"router_logits", &logits}}, {}).ok());
    auto r = runCli("route --input " + input + " --capacity-factor 1 --out " + out + " --csv " + csv);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    std::istringstream lines(slurp(csv));
    std::string line;
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_EQ(line, "token,text,choice,expert,gate,router_prob,position,kept");
    const int slot[] = {1, 2, 3, 1, 2, 1, 4, 1};
    const int kept[] = {1, 1, 0, 1, 1, 1, 0, 1};
    for (int t = 0; t < 8; ++t) {
        ASSERT_TRUE(std::getline(lines, line)) << t;
        std::vector<std::string> cells;
        std::stringstream row(line);
        for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
        ASSERT_EQ(cells.size(), 8u) << line;
        EXPECT_EQ(cells[0], std::to_string(t));
        EXPECT_EQ(cells[1], "");  // a logits file has no text
        EXPECT_EQ(cells[2], "1");
        EXPECT_EQ(cells[3], std::to_string(first[t]));
        const double p = std::exp(double{margin[t]}) / (std::exp(double{margin[t]}) + 3.0);
        EXPECT_NEAR(std::stod(cells[4]), p, 1e-7) << line;
        EXPECT_EQ(cells[4], cells[5]);
        EXPECT_EQ(cells[6], std::to_string(slot[t])) << line;
        EXPECT_EQ(cells[7], std::to_string(kept[t])) << line;
    }
    EXPECT_FALSE(std::getline(lines, line));

    // A text names its tokens, quoted with quotes doubled.
    ASSERT_EQ(runCli("route --text 'say \"hi\"' --tokenizer words --experts 2 --out " + out + " --csv " + csv).status, 0);
    EXPECT_NE(slurp(csv).find("\n0,\"say\",1,"), std::string::npos) << slurp(csv);
    EXPECT_NE(slurp(csv).find(",\"\"\"\",1,"), std::string::npos) << slurp(csv);
}

TEST(CliRoute, AnUnwritableCsvLeavesNoRoutingFile) {
    const std::string out = tempPath("route_csv_refused.safetensors");
    std::remove(out.c_str());
    auto r = runCli("route --text 'a b c' --out " + out + " --csv " + tempPath("no-such-folder") + "/route.csv");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.stderrText.find("no-such-folder"), std::string::npos) << r.stderrText;
    EXPECT_FALSE(std::ifstream(out).good());
}

TEST(CliRoute, HiddenTimesRouterAndTextUnderASeededRouter) {
    PlainTensor hidden = PlainTensor::fromF32({2, 3}, {1, 2, 3, 0, 1, 0});
    PlainTensor router = PlainTensor::fromF32({2, 3}, {1, 0, 0, 0, 1, 1});
    const std::string input = tempPath("route_hidden.safetensors"), out = tempPath("route2.safetensors");
    ASSERT_TRUE(writeSafetensors(input, {{"hidden", &hidden}, {"router", &router}}, {}).ok());
    auto r = runCli("route --input " + input + " --capacity-factor 0 --out " + out);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    auto file = SafetensorsFile::open(out);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ((*file)->read("moe.router_logits")->f32, (std::vector<float>{1, 5, 0, 1}));
    EXPECT_EQ((*file)->read("moe.expert")->i64, (std::vector<std::int64_t>{1, 1}));

    // a text: same seed, same routing; top-2 with normalised gates
    const std::string a = tempPath("route_a.safetensors"), b = tempPath("route_b.safetensors");
    ASSERT_EQ(runCli("route --text 'the cat sat on the mat' --experts 4 --policy topk --normalize --out " + a).status, 0);
    ASSERT_EQ(runCli("route --text 'the cat sat on the mat' --experts 4 --policy topk --normalize --out " + b).status, 0);
    auto fa = SafetensorsFile::open(a), fb = SafetensorsFile::open(b);
    ASSERT_TRUE(fa.ok() && fb.ok());
    EXPECT_EQ((*fa)->read("moe.expert")->i64, (*fb)->read("moe.expert")->i64);
    const auto gate = (*fa)->read("moe.gate");
    ASSERT_EQ(gate->shape, (std::vector<std::int64_t>{6, 2}));
    for (int t = 0; t < 6; ++t) EXPECT_NEAR(gate->f32[t * 2] + gate->f32[t * 2 + 1], 1.0, 1e-6);
}

TEST(CliRoute, BadInputIsRefusedWithNothingWritten) {
    PlainTensor hidden = PlainTensor::fromF32({2, 3}, {1, 2, 3, 0, 1, 0});
    PlainTensor router = PlainTensor::fromF32({2, 2}, {1, 0, 0, 1});
    PlainTensor nanRouter = PlainTensor::fromF32({2, 3}, {1, 0, 0, 0, std::nanf(""), 1});
    const std::string mismatch = tempPath("route_mismatch.safetensors"), nan = tempPath("route_nan.safetensors");
    ASSERT_TRUE(writeSafetensors(mismatch, {{"hidden", &hidden}, {"router", &router}}, {}).ok());
    ASSERT_TRUE(writeSafetensors(nan, {{"hidden", &hidden}, {"router", &nanRouter}}, {}).ok());
    const std::string out = tempPath("route_refused.safetensors");
    const struct {
        std::string args, needle;
    } cases[] = {
        {"--input " + mismatch, "d = 3 but router has d = 2"},
        {"--input " + nan, "not finite"},
        {"--text 'a b c' --experts 2 --policy topk --k 3", "exceeds the 2 experts"},
        {"--text 'a b c' --capacity-factor -1", "capacity-factor"},
        {"--text 'a b c' --group-size 2", "group_size 2 does not divide"},
        {"--text 'a b c' --experts 0", "experts"},
    };
    for (const auto& c : cases) {
        std::remove(out.c_str());
        auto r = runCli("route " + c.args + " --out " + out);
        EXPECT_NE(r.status, 0) << c.args;
        EXPECT_NE(r.stderrText.find(c.needle), std::string::npos) << c.args << "\n" << r.stderrText;
        EXPECT_FALSE(std::ifstream(out).good()) << c.args;
    }
}

// Routing is checked against --memory-budget before anything is allocated: one byte below what
// the text's routing needs is refused with nothing written; exactly that routes.
TEST(CliRoute, ARoutingOverTheMemoryBudgetIsRefusedAndWritesNothing) {
    const std::string text = "the cat sat on the mat and the dog ran to the park";
    InputSpec input;
    input.text = text;
    input.tokenizer = TokenizerKind::Words;
    auto tokens = tokenize(input);
    ASSERT_TRUE(tokens.ok());
    const auto n = static_cast<std::int64_t>(tokens->tokens.size());
    const std::uint64_t need = routingBytes(n, 8, 2, 16);
    const std::string out = tempPath("route_budget.safetensors");
    std::remove(out.c_str());
    const std::string command = "route --text \"" + text + "\" --experts 8 --dim 16 --policy topk --out " + out;
    auto refused = runCli(command + " --memory-budget " + std::to_string(need - 1));
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.stderrText.find("routing " + std::to_string(n) + " tokens over 8 experts needs " + std::to_string(need) +
                                      " bytes, over the memory budget of " + std::to_string(need - 1)),
              std::string::npos)
        << refused.stderrText;
    EXPECT_FALSE(std::ifstream(out).good());
    auto routed = runCli(command + " --memory-budget " + std::to_string(need));
    EXPECT_EQ(routed.status, 0) << routed.stderrText;
    EXPECT_TRUE(std::ifstream(out).good());
    std::remove(out.c_str());
}

// route --model: a trained Switch model's own tokens and router; the capacity is the model's
// (ceil(n / E · 1.0) here) unless given; the same text routes the same way every time; a dense
// model and a layer it does not have are refused.
TEST(CliRoute, RoutesAModelsOwnTokensWithItsRouterAndCapacity) {
    const std::string folder = tempPath("switch_model");
    auto trained = runCli("train --arch switch --experts 3 --capacity-factor 1.0 --task copy --layers 2 --heads 2 --dim 16 "
                          "--steps 5 --batch 4 --length 4 --quiet --out " + folder);
    ASSERT_EQ(trained.status, 0) << trained.stderrText;
    const std::string a = tempPath("route_model_a.safetensors"), b = tempPath("route_model_b.safetensors"),
                      summary = tempPath("route_model.json"), csv = tempPath("route_model.csv");
    const std::string args = "route --model " + folder + " --layer 1 --text 'abcd'";
    auto first = runCli(args + " --out " + a + " --summary " + summary + " --csv " + csv);
    ASSERT_EQ(first.status, 0) << first.stderrText;
    ASSERT_EQ(runCli(args + " --out " + b).status, 0);
    EXPECT_EQ(slurp(a), slurp(b));
    const auto s = nlohmann::json::parse(slurp(summary));
    const int n = s["tokens"];
    EXPECT_EQ(n, 6);  // <s> a b c d </s>, the model's byte tokens
    EXPECT_EQ(s["experts"], 3);
    EXPECT_EQ(s["expert_capacity"], 2);  // ceil(6 / 3 · 1.0)
    EXPECT_NE(slurp(csv).find("\n1,\"a\",1,"), std::string::npos) << slurp(csv);
    // given, the capacity is the flag's
    ASSERT_EQ(runCli(args + " --capacity-factor 0 --out " + b + " --summary " + summary).status, 0);
    EXPECT_EQ(nlohmann::json::parse(slurp(summary))["expert_capacity"], 0);

    auto layer = runCli("route --model " + folder + " --layer 2 --text 'abcd' --out " + b);
    EXPECT_EQ(layer.status, 2);
    EXPECT_NE(layer.stderrText.find("--layer 2: the model has layers 0 … 1"), std::string::npos) << layer.stderrText;
    auto dense = runCli("route --model " + std::string(ATTNSCOPE_SOURCE_DIR) + "/samples/copy-model --text 'abcd' --out " + b);
    EXPECT_EQ(dense.status, 1);
    EXPECT_NE(dense.stderrText.find("has no router"), std::string::npos) << dense.stderrText;
}

// route --model on a Qwen2-MoE folder whose layer 0 is dense (decoder_sparse_step 2): layer 1's
// own router, by layer number; the dense layer refused naming the expert layers.
TEST(CliRoute, RoutesTheExpertLayerOfAQwen2MoeWithADenseLayer) {
    const std::string folder = tempPath("qwen2_moe");
    std::filesystem::remove_all(folder);
    attnscope::testing::LlamaSpec spec;
    spec.type = "qwen2_moe";
    spec.experts = 4;
    spec.normalize = false;
    spec.expertInner = 12;
    spec.sharedInner = 16;
    spec.sparseStep = 2;
    attnscope::testing::writeLlamaFolder(folder, spec);
    attnscope::testing::writeTinyTokenizerJson(folder);
    const std::string summary = tempPath("route_qwen.json"), out = tempPath("route_qwen.safetensors");
    auto routed = runCli("route --model " + folder + " --layer 1 --text 'the cat sat on the mat' --out " + out + " --summary " + summary);
    ASSERT_EQ(routed.status, 0) << routed.stderrText;
    const auto s = nlohmann::json::parse(slurp(summary));
    EXPECT_EQ(s["experts"], 4);
    EXPECT_EQ(s["tokens"], 8);
    auto dense = runCli("route --model " + folder + " --layer 0 --text 'the cat' --out " + out);
    EXPECT_EQ(dense.status, 2);
    EXPECT_NE(dense.stderrText.find("that layer's FFN is dense; the expert layers are 1"), std::string::npos) << dense.stderrText;
    std::filesystem::remove_all(folder);
}

// route --model on a Switch Transformers checkpoint: the text through its spiece.model and the
// T5 encoder, the sparse block's router with the model's fixed expert_capacity; a dense block is
// refused with the blocks that have experts.
TEST(CliRoute, RoutesASwitchTransformersCheckpointsSparseBlock) {
    const std::string folder = tempPath("switch_t5");
    std::filesystem::remove_all(folder);
    attnscope::testing::writeTinySwitchFolder(folder);
    const std::string summary = tempPath("route_t5.json"), out = tempPath("route_t5.safetensors");
    auto routed = runCli("route --model " + folder + " --layer 1 --text 'the cat sat on a mat' --out " + out +
                         " --summary " + summary);
    ASSERT_EQ(routed.status, 0) << routed.stderrText;
    const auto s = nlohmann::json::parse(slurp(summary));
    EXPECT_EQ(s["experts"], 4);
    EXPECT_EQ(s["expert_capacity"], 3);  // the config's, not a factor's
    EXPECT_GE(s["tokens"].get<int>(), 7);  // the pieces and </s>
    auto dense = runCli("route --model " + folder + " --layer 0 --text 'the cat' --out " + out);
    EXPECT_EQ(dense.status, 2);
    EXPECT_NE(dense.stderrText.find("--layer 0: that layer's FFN is dense; the expert layers are 1"), std::string::npos)
        << dense.stderrText;
    // and its attention runs through the variants like any model's
    auto run = runCli("run --model " + folder + " --layer 2 --variant full --text 'the cat sat' --out " + out);
    EXPECT_EQ(run.status, 0) << run.stderrText;
    std::filesystem::remove_all(folder);
}
