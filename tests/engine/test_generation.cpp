// Generation: the decoder step (plain C++ over the stored weights, with a key/value cache) against
// the full-sequence forward — every greedy token is the forward's most likely next token at its
// position — for dense, grouped-query, biased, q/k-normed and routed decoders; a GGUF file and the
// folder of the floats it stands for write the same tokens; seeded sampling repeats; the end-of-
// text token and the caller stop it; families without a step are refused by name.

#include <attnscope/engine.h>

#include "../support/tiny_gguf.h"
#include "torch/model/decoder_step.h"
#include "torch/model/rotary_positions.h"
#include "torch/model/transformer_model.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;

namespace {

class Generation : public LlamaWeights {
protected:
    // A folder of the spec's weights without an LM head: the tied embedding is the head.
    fs::path folder(const LlamaSpec& spec, const std::string& name = "folder") {
        const fs::path dir = m_dir / name;
        writeLlamaFolderWith(dir, spec, llamaTensors(spec));
        return dir;
    }
    GenerateResult generate(const fs::path& model, GenerateRequest request) {
        auto opened = m_engine->openModel(model.string());
        EXPECT_TRUE(opened.ok()) << (opened.ok() ? "" : opened.error().message);
        auto result = m_engine->generate(request);
        EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
        return result.ok() ? result.value() : GenerateResult{};
    }
    // Every generated token is the argmax of the forward's logits (tied head · final hidden) one
    // position before it, wherever the forward's top two are not within rounding of each other.
    void expectForwardAgrees(const LlamaSpec& spec, const GenerateResult& g) {
        ASSERT_FALSE(g.generatedIds.empty());
        std::vector<std::int64_t> all = g.promptIds;
        all.insert(all.end(), g.generatedIds.begin(), g.generatedIds.end());
        ModelInput input;
        input.ids = all;
        input.keepAttention = false;
        auto pass = m_engine->forwardModel(input);
        ASSERT_TRUE(pass.ok()) << pass.error().message;
        const PlainTensor& hidden = pass.value()->hidden.back();
        const TensorMap weights = llamaTensors(spec);
        const std::vector<float>& embedding = weights.at("embed_tokens.weight").f32;
        int checked = 0;
        for (std::size_t t = 0; t < g.generatedIds.size(); ++t) {
            const std::size_t row = g.promptIds.size() - 1 + t;
            std::vector<double> logits(static_cast<std::size_t>(spec.vocab));
            for (std::int64_t v = 0; v < spec.vocab; ++v)
                for (std::int64_t j = 0; j < spec.hidden; ++j)
                    logits[static_cast<std::size_t>(v)] += static_cast<double>(embedding[static_cast<std::size_t>(v * spec.hidden + j)]) *
                                                           hidden.f32[row * static_cast<std::size_t>(spec.hidden) + static_cast<std::size_t>(j)];
            std::vector<double> sorted = logits;
            std::sort(sorted.rbegin(), sorted.rend());
            if (sorted[0] - sorted[1] < 1e-3) continue;  // a near-tie: rounding may pick either
            EXPECT_EQ(g.generatedIds[t], std::max_element(logits.begin(), logits.end()) - logits.begin()) << "token " << t;
            ++checked;
        }
        EXPECT_GE(checked, static_cast<int>(g.generatedIds.size()) - 1);
    }
};

GenerateRequest greedy(std::int64_t tokens) {
    GenerateRequest r;
    r.promptIds = {1, 9, 4, 30, 7};
    r.maxNewTokens = tokens;
    r.stopAtEos = false;
    return r;
}

}  // namespace

TEST_F(Generation, GreedyTokensAreTheForwardsMostLikelyForEveryDecoderKind) {
    struct Case {
        const char* type;
        std::int64_t experts, shared;
        bool bias;
        std::int64_t window;
    };
    for (const Case& c : {Case{"llama", 0, 0, false, 0}, Case{"llama", 0, 0, true, 0}, Case{"qwen2", 0, 0, false, 0},
                          Case{"qwen3", 0, 0, false, 0}, Case{"mistral", 0, 0, false, 4}, Case{"mixtral", 4, 0, false, 0},
                          Case{"qwen2_moe", 4, 16, false, 0}, Case{"olmoe", 4, 0, false, 0}}) {
        SCOPED_TRACE(c.type);
        LlamaSpec spec;
        spec.type = c.type;
        spec.experts = c.experts;
        spec.sharedInner = c.shared;
        spec.bias = c.bias;
        spec.window = c.window;
        if (spec.type == "olmoe") spec.headDim = spec.hidden / spec.heads;  // (OLMoE has no head_dim)
        const GenerateResult g = generate(folder(spec, c.type), greedy(12));
        EXPECT_EQ(g.generatedIds.size(), 12u);
        expectForwardAgrees(spec, g);
    }
}

// The step alone, from an empty cache, token after token: its logits equal the full forward's
// (tied head · final hidden, in float64 here) at every position, within float32 rounding.
TEST_F(Generation, EveryStepsLogitsEqualTheForwardsAtItsPosition) {
    struct Case {
        const char* type;
        std::int64_t experts, shared, window;
        double theta;
    };
    for (const Case& c : {Case{"llama", 0, 0, 0, 10000}, Case{"qwen2", 0, 0, 0, 100}, Case{"qwen3", 0, 0, 0, 10000},
                          Case{"mistral", 0, 0, 3, 10000}, Case{"qwen2_moe", 4, 16, 0, 10000}, Case{"olmoe", 4, 0, 0, 10000}}) {
        SCOPED_TRACE(c.type);
        LlamaSpec spec;
        spec.type = c.type;
        spec.experts = c.experts;
        spec.sharedInner = c.shared;
        spec.window = c.window;
        spec.theta = c.theta;
        if (spec.type == "olmoe") spec.headDim = spec.hidden / spec.heads;
        const fs::path dir = folder(spec, c.type);
        const std::vector<std::int64_t> ids = {1, 9, 4, 30, 7, 12, 3, 44, 21, 5};
        ASSERT_TRUE(m_engine->openModel(dir.string()).ok());
        ModelInput input;
        input.ids = ids;
        auto pass = m_engine->forwardModel(input);
        ASSERT_TRUE(pass.ok()) << pass.error().message;
        auto checkpoint = ModelCheckpoint::open(dir.string());
        ASSERT_TRUE(checkpoint.ok());
        const ModelConfig& config = checkpoint.value()->config();
        auto stepper = DecoderStepper::create(*checkpoint.value(), switchRouterOptions(config.moe));
        ASSERT_TRUE(stepper.ok()) << stepper.error().message;
        DecoderCache cache = stepper.value().emptyCache(static_cast<std::int64_t>(ids.size()));
        const at::Tensor inv = ropeInverseFrequencies(config.llama.rope, config.headSize, 10, config.maxPositions).contiguous();
        DecoderRotary rotary{std::vector<float>(inv.data_ptr<float>(), inv.data_ptr<float>() + inv.numel()),
                             static_cast<float>(ropeAttentionFactor(config.llama.rope))};
        const TensorMap weights = llamaTensors(spec);
        const std::vector<float>& embedding = weights.at("embed_tokens.weight").f32;
        const PlainTensor& hidden = pass.value()->hidden.back();
        for (std::size_t t = 0; t < ids.size(); ++t) {
            auto logits = stepper.value().step(ids[t], cache, rotary);
            ASSERT_TRUE(logits.ok()) << logits.error().message;
            double worst = 0, largest = 0;
            for (std::int64_t v = 0; v < spec.vocab; ++v) {
                double expected = 0;
                for (std::int64_t j = 0; j < spec.hidden; ++j)
                    expected += static_cast<double>(embedding[static_cast<std::size_t>(v * spec.hidden + j)]) *
                                hidden.f32[t * static_cast<std::size_t>(spec.hidden) + static_cast<std::size_t>(j)];
                worst = std::max(worst, std::abs(expected - logits.value()[static_cast<std::size_t>(v)]));
                largest = std::max(largest, std::abs(expected));
            }
            EXPECT_LT(worst, 1e-4 * std::max(1.0, largest)) << "position " << t;
        }
    }
}

// The file's blocks and the folder of the floats they stand for: the same tokens, with llama.cpp's
// q/k row order undone on the step's products as on the forward's weights.
TEST_F(Generation, AGgufFileWritesWhatItsFolderTwinWrites) {
    LlamaSpec spec;
    spec.hidden = spec.inner = 256;
    spec.headDim = 64;
    GgufModelOptions o;
    o.typeOf = [](const std::string& name) { return name.find("mlp.") != std::string::npos ? GgmlType::Q4_K : GgmlType::Q8_0; };
    fs::create_directories(m_dir);
    const TensorMap represented = writeGgufModel(m_dir / "m.gguf", spec, llamaTensors(spec), o);
    writeLlamaFolderWith(m_dir / "twin", spec, represented);
    const GenerateResult fromFile = generate(m_dir / "m.gguf", greedy(10));
    const GenerateResult fromFolder = generate(m_dir / "twin", greedy(10));
    EXPECT_EQ(fromFile.generatedIds, fromFolder.generatedIds);
    EXPECT_EQ(fromFile.generatedIds.size(), 10u);
}

// What the model looked at when it wrote each token: the watched layer's row of the position before
// the token — the prompt's last row for the first — equals the full forward's row there, per head.
TEST_F(Generation, EachTokensWatchedRowIsTheForwardsRowItWasWrittenFrom) {
    LlamaSpec spec;
    spec.type = "mistral";
    spec.window = 4;  // (layer 1 slides: rows past the window are masked as the forward masks them)
    const fs::path dir = folder(spec);
    ASSERT_TRUE(m_engine->openModel(dir.string()).ok());
    GenerateRequest request = greedy(6);
    request.watchLayer = 1;
    std::vector<GeneratedToken> tokens;
    auto g = m_engine->generate(request, [&](const GeneratedToken& t) {
        tokens.push_back(t);
        return true;
    });
    ASSERT_TRUE(g.ok()) << g.error().message;
    std::vector<std::int64_t> all = g.value().promptIds;
    all.insert(all.end(), g.value().generatedIds.begin(), g.value().generatedIds.end());
    ModelInput input;
    input.ids = all;
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok());
    const PlainTensor& attention = pass.value()->attention.at(1);  // [heads, N, N]
    const std::int64_t N = static_cast<std::int64_t>(all.size()), n = static_cast<std::int64_t>(g.value().promptIds.size());
    ASSERT_EQ(tokens.size(), 6u);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        const std::int64_t row = n - 1 + static_cast<std::int64_t>(t), length = row + 1;
        ASSERT_EQ(tokens[t].attention.size(), static_cast<std::size_t>(spec.heads * length)) << t;
        for (std::int64_t h = 0; h < spec.heads; ++h)
            for (std::int64_t j = 0; j < length; ++j)
                EXPECT_NEAR(tokens[t].attention[static_cast<std::size_t>(h * length + j)],
                            attention.f32[static_cast<std::size_t>((h * N + row) * N + j)], 1e-5)
                    << "token " << t << " head " << h << " key " << j;
        ASSERT_FALSE(tokens[t].strongest.empty());
        EXPECT_LE(tokens[t].strongest.front().position, row);
        EXPECT_GT(row - tokens[t].strongest.front().position, -1);
        EXPECT_GE(tokens[t].strongest.front().weight, tokens[t].strongest.back().weight);
    }
    request.watchLayer = 2;
    EXPECT_FALSE(m_engine->generate(request).ok());  // (the model has 2 layers)
}

// The run shown while writing: every token's soFar is the watched layer's own attention of the
// sequence up to the position it was written from — equal to the full forward's attention there,
// weights and pattern (causal, the window) — its last row the token's `attention`, its tokens the
// prompt's and the written ones.
TEST_F(Generation, EachTokensRunSoFarIsTheForwardsAttentionOfTheSequenceBeforeIt) {
    LlamaSpec spec;
    spec.type = "mistral";
    spec.window = 4;
    const fs::path dir = folder(spec);
    ASSERT_TRUE(m_engine->openModel(dir.string()).ok());
    GenerateRequest request = greedy(5);
    request.watchLayer = 1;
    request.liveResults = true;
    std::vector<GeneratedToken> tokens;
    auto g = m_engine->generate(request, [&](const GeneratedToken& t) {
        tokens.push_back(t);
        return true;
    });
    ASSERT_TRUE(g.ok()) << g.error().message;
    std::vector<std::int64_t> all = g.value().promptIds;
    all.insert(all.end(), g.value().generatedIds.begin(), g.value().generatedIds.end());
    ModelInput input;
    input.ids = all;
    auto pass = m_engine->forwardModel(input);
    ASSERT_TRUE(pass.ok());
    const PlainTensor& attention = pass.value()->attention.at(1);  // [heads, N, N]
    const std::int64_t N = static_cast<std::int64_t>(all.size()), p = static_cast<std::int64_t>(g.value().promptIds.size());
    ASSERT_EQ(tokens.size(), 5u);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        ASSERT_TRUE(tokens[t].soFar) << t;
        const RunResult& run = *tokens[t].soFar;
        const std::int64_t n = p + static_cast<std::int64_t>(t);
        ASSERT_EQ(run.n, n);
        ASSERT_EQ(run.results.size(), 1u);
        EXPECT_EQ(run.ownAttention, 0);
        EXPECT_EQ(run.modelLayer, 1);
        EXPECT_EQ(run.results[0].variantId, "model_softmax");
        ASSERT_EQ(run.input.tokens.size(), static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(run.input.tokens[static_cast<std::size_t>(i)].id, all[static_cast<std::size_t>(i)]);
        const AttentionWeights& w = *run.results[0].weights;
        ASSERT_EQ(w.queries(), n);
        ASSERT_EQ(w.keys(), n);
        for (int h = 0; h < spec.heads; ++h) {
            const WeightTile tile = w.tile(h, 0, n, 0, n, true);
            for (std::int64_t i = 0; i < n; ++i)
                for (std::int64_t j = 0; j < n; ++j) {
                    const float expected = attention.f32[static_cast<std::size_t>((h * N + i) * N + j)];
                    EXPECT_NEAR(tile.at(i, j), expected, 1e-5) << "token " << t << " head " << h << " (" << i << ", " << j << ")";
                    const bool listed = j <= i && i - j < spec.window;  // (layer 1 slides)
                    EXPECT_EQ(tile.reasons[static_cast<std::size_t>(i * n + j)] != 0, listed) << i << ", " << j;
                }
            for (std::int64_t j = 0; j < n; ++j)  // the last row is what the token was written from
                EXPECT_EQ(tile.at(n - 1, j), tokens[t].attention[static_cast<std::size_t>(h * n + j)]);
        }
    }
    // an earlier snapshot is not changed by the rows after it
    EXPECT_EQ(tokens[1].soFar->n, p + 1);
    EXPECT_EQ(tokens[1].soFar->results[0].weights->queries(), p + 1);
}

TEST_F(Generation, SeededSamplingRepeatsAndTopOneIsGreedy) {
    LlamaSpec spec;
    const fs::path dir = folder(spec);
    GenerateRequest sampled = greedy(12);
    sampled.temperature = 100;  // (near uniform: the tiny model's logits are peaked)
    sampled.seed = 42;
    const auto first = generate(dir, sampled), second = generate(dir, sampled);
    EXPECT_EQ(first.generatedIds, second.generatedIds);
    sampled.seed = 43;
    EXPECT_NE(generate(dir, sampled).generatedIds, first.generatedIds);
    sampled.topK = 1;
    EXPECT_EQ(generate(dir, sampled).generatedIds, generate(dir, greedy(12)).generatedIds);
}

TEST_F(Generation, TheEndOfTextTokenAndTheCallerStopIt) {
    LlamaSpec spec;
    fs::create_directories(m_dir);
    writeGgufModel(m_dir / "m.gguf", spec, llamaTensors(spec));
    const GenerateResult free = generate(m_dir / "m.gguf", greedy(6));
    ASSERT_EQ(free.generatedIds.size(), 6u);
    // the third greedy token made the end-of-text token: generation ends before its first use
    GgufModelOptions o;
    o.extraMetadata["tokenizer.ggml.eos_token_id"] = static_cast<std::uint32_t>(free.generatedIds[2]);
    writeGgufModel(m_dir / "eos.gguf", spec, llamaTensors(spec), o);
    GenerateRequest untilEos = greedy(6);
    untilEos.stopAtEos = true;
    const GenerateResult stopped = generate(m_dir / "eos.gguf", untilEos);
    EXPECT_TRUE(stopped.stoppedAtEos);
    const auto firstUse = std::find(free.generatedIds.begin(), free.generatedIds.end(), free.generatedIds[2]);
    EXPECT_EQ(stopped.generatedIds, std::vector<std::int64_t>(free.generatedIds.begin(), firstUse));
    // the caller stops after two tokens
    ASSERT_TRUE(m_engine->openModel((m_dir / "m.gguf").string()).ok());
    int seen = 0;
    auto byCaller = m_engine->generate(greedy(6), [&](const GeneratedToken& t) {
        EXPECT_EQ(t.index, seen);
        return ++seen < 2;
    });
    ASSERT_TRUE(byCaller.ok());
    EXPECT_TRUE(byCaller.value().stoppedByCaller);
    EXPECT_EQ(byCaller.value().generatedIds.size(), 2u);
}

TEST_F(Generation, RefusalsNameTheProblem) {
    LlamaSpec gemma;
    gemma.type = "gemma2";
    ASSERT_TRUE(m_engine->openModel(folder(gemma, "gemma").string()).ok());
    auto refused = m_engine->generate(greedy(4));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("Gemma 2 models do not generate"), std::string::npos) << refused.error().message;

    LlamaSpec spec;
    ASSERT_TRUE(m_engine->openModel(folder(spec).string()).ok());
    GenerateRequest tooLong = greedy(spec.positions);
    auto full = m_engine->generate(tooLong);
    ASSERT_FALSE(full.ok());
    EXPECT_NE(full.error().message.find("pass the model's 64 positions"), std::string::npos) << full.error().message;
    GenerateRequest none = greedy(0);
    EXPECT_FALSE(m_engine->generate(none).ok());
    GenerateRequest badId = greedy(2);
    badId.promptIds = {1, 500};
    auto outside = m_engine->generate(badId);
    ASSERT_FALSE(outside.ok());
    EXPECT_NE(outside.error().message.find("prompt id 500 is outside the vocabulary"), std::string::npos);
}
