// attnscope-cli generate end to end on a GGUF file with its own byte-level tokenizer: the prompt
// tokenized from the file's metadata, the generated text on stdout and in the summary, every
// layer's own attention of prompt and generated tokens written and read back by `tile`, refusals
// (that greedy runs repeat is the engine tests' to check, without a process per run).

#include "cli_test_support.h"
#include "../support/tiny_gguf.h"

#include <attnscope/model_tokenizer.h>
#include <attnscope/safetensors.h>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

using namespace attnscope::engine;
using namespace attnscope::testing;

namespace {

std::string writeModel() {
    LlamaSpec spec;
    spec.vocab = 259;
    GgufModelOptions o;
    o.extraMetadata = byteLevelTokenizerMetadata();
    const std::string path = tempPath("generate.gguf");
    writeGgufModel(path, spec, llamaTensors(spec), o);
    return path;
}

}  // namespace

TEST(CliGenerate, WritesTheTextAndEveryLayersAttentionOfTheWholeSequence) {
    const std::string model = writeModel(), out = tempPath("gen.safetensors"), summary = tempPath("gen.json");
    auto r = runCli("generate --model " + model + " --prompt 'ab a' --max-new-tokens 5 --out " + out + " --summary " + summary);
    ASSERT_EQ(r.status, 0) << r.stderrText;
    const auto s = nlohmann::json::parse(slurp(summary));
    EXPECT_EQ(s["prompt_ids"], (std::vector<std::int64_t>{256, 257}));  // "ab", " a"
    const auto generated = s["generated_ids"].get<std::vector<std::int64_t>>();
    EXPECT_LE(generated.size(), 5u);
    EXPECT_TRUE(generated.size() == 5u || s["stopped_at_eos"].get<bool>());
    EXPECT_NE(r.stdoutText.find(s["text"].get<std::string>()), std::string::npos);
    // --out holds layer 0, and every layer has its file: prompt and generated tokens, causal
    const auto files = s["files"].get<std::vector<std::string>>();
    ASSERT_EQ(files.size(), 3u);  // --out, then layers 0 and 1
    const std::int64_t n = 2 + static_cast<std::int64_t>(generated.size());
    for (const auto& f : files) {
        auto file = SafetensorsFile::open(f);
        ASSERT_TRUE(file.ok()) << f;
        auto q = (*file)->read("q");
        ASSERT_TRUE(q.ok());
        EXPECT_EQ(q->shape[1], n) << f;
    }
    auto tile = runCli("tile " + files.back() + " --head 0 --rows " + std::to_string(n - 1) + " --format csv");
    ASSERT_EQ(tile.status, 0) << tile.stderrText;
    // the last token's row: n weights summing to 1 (the model's own causal attention)
    std::istringstream row(tile.stdoutText.substr(tile.stdoutText.rfind('\n', tile.stdoutText.size() - 2) + 1));
    double sum = 0;
    std::string cell;
    int cells = 0;
    while (std::getline(row, cell, ',')) {
        sum += std::stod(cell);
        ++cells;
    }
    EXPECT_EQ(cells, n);
    EXPECT_NEAR(sum, 1.0, 1e-5) << tile.stdoutText;
}

TEST(CliGenerate, RefusalsNameTheProblem) {
    const std::string model = writeModel(), out = tempPath("gen.safetensors");
    auto noPrompt = runCli("generate --model " + model + " --out " + out);
    EXPECT_EQ(noPrompt.status, 2);
    EXPECT_NE(noPrompt.stderrText.find("generate needs a prompt"), std::string::npos);
    auto tooMany = runCli("generate --model " + model + " --prompt ab --max-new-tokens 9000 --out " + out);
    EXPECT_EQ(tooMany.status, 2);
    auto layer = runCli("generate --model " + model + " --prompt ab --layer 7 --out " + out);
    EXPECT_NE(layer.status, 0);
    EXPECT_NE(layer.stderrText.find("--layer 7 is outside the model's 2 layers"), std::string::npos) << layer.stderrText;
    auto missing = runCli("generate --model " + tempPath("none.gguf") + " --prompt ab --out " + out);
    EXPECT_EQ(missing.status, 1);
}
