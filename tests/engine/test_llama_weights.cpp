// Llama-family weights as the engine holds them: layers read in float32 one at a time and read
// again alike on the next pass, a model over the memory budget refused at open with its size,
// experts where the config makes a layer dense refused by name, and the model's own sliding
// window carried by a run on its layers.

#include <attnscope/engine.h>
#include <attnscope/model_checkpoint.h>

#include "../support/tiny_llama.h"
#include "torch/model/model_pass_bytes.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;

// Layers are read in float32 one at a time and released: a second pass reads them again and
// gives the same values; the copy the pass holds is one layer's, not the model's.
TEST_F(LlamaWeights, ASecondPassReadsTheReleasedLayersAgainAlike) {
    LlamaSpec spec;
    spec.type = "qwen2_moe";
    spec.experts = 4;
    spec.sharedInner = 16;
    writeLlamaFolder(m_dir, spec);
    ASSERT_TRUE(m_engine->openModel(m_dir.string()).ok());
    ModelInput input;
    input.ids = {1, 9, 4, 30, 2};
    auto first = m_engine->forwardModel(input);
    auto second = m_engine->forwardModel(input);
    ASSERT_TRUE(first.ok() && second.ok());
    for (std::size_t l = 0; l < 3; ++l) EXPECT_EQ(first.value()->hidden[l].f32, second.value()->hidden[l].f32) << l;
    auto config = parseModelConfig(spec.configJson(), "config.json");
    ASSERT_TRUE(config.ok());
    std::uint64_t all = 0, layer0 = 0;
    for (const auto& t : expectedTensors(config.value())) {
        std::uint64_t bytes = 4;
        for (auto d : t.shape) bytes *= std::uint64_t(d);
        all += bytes;
        if (t.name.rfind("layers.0.", 0) == 0) layer0 += bytes;
    }
    // 5 embedding rows + the final norm + one layer
    EXPECT_EQ(modelPassBytes(config.value(), 5, false).weights, 5 * 24 * 4 + 24 * 4 + layer0);
    EXPECT_LT(modelPassBytes(config.value(), 5, false).weights, all / 2);
}

// Before anything is read: the mapped files plus one layer in float32 against the budget.
TEST_F(LlamaWeights, AModelOverTheMemoryBudgetIsRefusedAtOpenWithItsSize) {
    const LlamaSpec spec;
    writeLlamaFolder(m_dir, spec);
    auto roomy = m_engine->openModel(m_dir.string());
    ASSERT_TRUE(roomy.ok());
    auto config = parseModelConfig(spec.configJson(), "config.json");
    ASSERT_TRUE(config.ok());
    // (its largest layer's mapped bytes, not the whole file: a finished layer's pages are dropped)
    EXPECT_LT(roomy->residentWeightBytes, roomy->weightBytes);
    const std::uint64_t need = roomy->residentWeightBytes + modelPassBytes(config.value(), 1, false).weights;
    auto budgeted = [](std::uint64_t bytes) {
        EngineOptions options;
        options.memoryBudgetBytes = bytes;
        return std::move(Engine::create(options).value());
    };
    auto refused = budgeted(need - 1)->openModel(m_dir.string());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::OutOfBudget);
    EXPECT_NE(refused.error().message.find(m_dir.string() + ": the model needs"), std::string::npos) << refused.error().message;
    EXPECT_NE(refused.error().message.find("over the memory budget"), std::string::npos);
    EXPECT_TRUE(budgeted(need)->openModel(m_dir.string()).ok());
}

// Experts where the config makes the layer dense are refused by name, not ignored.
TEST_F(LlamaWeights, ExpertsInALayerTheConfigMakesDenseAreRefused) {
    LlamaSpec spec;
    spec.type = "qwen2_moe";
    spec.experts = 4;
    spec.sparseStep = 2;  // layer 0 dense
    writeLlamaFolder(m_dir, spec);
    TensorMap tensors = llamaTensors(spec);
    tensors["layers.0.mlp.gate.weight"] = PlainTensor::zeros(DType::F32, {4, 24});  // a router it has no place for
    std::vector<StWriteItem> items;
    for (const auto& [name, t] : tensors) items.push_back(StWriteItem("model." + name, &t));
    ASSERT_TRUE(writeSafetensors((m_dir / "model.safetensors").string(), items, {{"format", "pt"}}).ok());
    auto refused = m_engine->openModel(m_dir.string());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("puts experts in layer 0, which config.json makes dense (decoder_sparse_step, mlp_only_layers)"),
              std::string::npos)
        << refused.error().message;
}

// A run on a sliding layer carries the model's own window (the mask view draws it); others none.
TEST_F(LlamaWeights, RunsOnSlidingLayersCarryTheModelsWindow) {
    LlamaSpec qwen;
    qwen.type = "qwen2";
    qwen.window = 3;
    qwen.windowFrom = 1;  // layer 0 full, layer 1 sliding
    writeLlamaFolder(m_dir / "qwen2", qwen);
    auto info = m_engine->openModel((m_dir / "qwen2").string());
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->layerWindows, (std::vector<std::int64_t>{0, 3}));
    for (const char* type : {"mistral", "llama"}) {
        LlamaSpec spec;
        spec.type = type;
        spec.window = std::string(type) == "mistral" ? 3 : 0;
        const fs::path dir = m_dir / type;
        writeLlamaFolder(dir, spec);
        writeTinySpiece(dir);  // a run tokenizes its text
        fs::rename(dir / "spiece.model", dir / "tokenizer.model");
        RunRequest request;
        request.source = ModelLayerSource{dir.string(), 1, false, {}, InputSpec{"the cat sat"}};
        request.variants.push_back(VariantRequest{"full", {{"causal", true}}});
        auto run = m_engine->run(request);
        ASSERT_TRUE(run.ok()) << run.error().message;
        EXPECT_EQ(run.value()->modelWindow, spec.window) << type;
        EXPECT_EQ(run.value()->modelKvHeads, 2);
    }
}
