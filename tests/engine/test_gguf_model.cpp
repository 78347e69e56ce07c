// GGUF files opened as models: written here from the same tensors as a Hugging Face folder (the
// way llama.cpp's converter writes them), each architecture's attention, hidden states and
// router logits equal the folder's exactly — F32 files from the original weights, every other
// type from the floats its blocks stand for — and malformed or unsupported files are refused by
// rule.

#include <attnscope/engine.h>
#include <attnscope/model_checkpoint.h>

#include "../support/tiny_gguf.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;
using namespace attnscope::testing;

namespace {

class GgufModel : public LlamaWeights {
protected:
    std::shared_ptr<const ModelForward> forward(const fs::path& model) {
        auto opened = m_engine->openModel(model.string());
        EXPECT_TRUE(opened.ok()) << (opened.ok() ? "" : opened.error().message);
        if (!opened.ok()) return nullptr;
        ModelInput input;
        input.ids = {1, 9, 4, 30, 2, 17, 5};
        auto pass = m_engine->forwardModel(input);
        EXPECT_TRUE(pass.ok()) << (pass.ok() ? "" : pass.error().message);
        return pass.ok() ? pass.value() : nullptr;
    }
    // The GGUF file and its folder twin give the same pass, float for float.
    void expectSameAsFolder(const LlamaSpec& spec, const GgufModelOptions& options) {
        fs::create_directories(m_dir);
        const fs::path file = m_dir / "model.gguf";
        const TensorMap represented = writeGgufModel(file, spec, llamaTensors(spec), options);
        writeLlamaFolderWith(m_dir / "folder", spec, represented);
        const auto fromGguf = forward(file), fromFolder = forward(m_dir / "folder");
        ASSERT_TRUE(fromGguf && fromFolder);
        ASSERT_EQ(fromGguf->attention.size(), static_cast<std::size_t>(spec.layers));
        for (std::size_t l = 0; l < fromGguf->attention.size(); ++l) {
            EXPECT_EQ(fromGguf->attention[l].f32, fromFolder->attention[l].f32) << "layer " << l;
            EXPECT_EQ(fromGguf->hidden[l + 1].f32, fromFolder->hidden[l + 1].f32) << "layer " << l;
        }
        ASSERT_EQ(fromGguf->routerLogits.size(), fromFolder->routerLogits.size());
        for (std::size_t l = 0; l < fromGguf->routerLogits.size(); ++l)
            EXPECT_EQ(fromGguf->routerLogits[l].f32, fromFolder->routerLogits[l].f32) << "layer " << l;
    }
};

std::string refusal(const Result<std::unique_ptr<ModelCheckpoint>>& opened) { return opened.ok() ? "" : opened.error().message; }

}  // namespace

// F32: the folder holds the original weights, so the file's q/k rows, reordered by the converter,
// are put back exactly.
TEST_F(GgufModel, LlamaInF32EqualsTheFolderWithTheRowOrderUndone) {
    LlamaSpec spec;
    const TensorMap original = llamaTensors(spec);
    fs::create_directories(m_dir);
    const TensorMap represented = writeGgufModel(m_dir / "m.gguf", spec, original);
    EXPECT_EQ(represented.at("layers.0.self_attn.q_proj.weight").f32, original.at("layers.0.self_attn.q_proj.weight").f32);
    expectSameAsFolder(spec, {});
}

TEST_F(GgufModel, LlamaWithBiasesPermutesTheQAndKBiasesToo) {
    LlamaSpec spec;
    spec.bias = true;
    expectSameAsFolder(spec, {});
}

TEST_F(GgufModel, Qwen2AndQwen3KeepTheirRowOrder) {
    for (const char* type : {"qwen2", "qwen3"}) {
        SCOPED_TRACE(type);
        LlamaSpec spec;
        spec.type = type;
        GgufModelOptions o;
        o.arch = type;
        expectSameAsFolder(spec, o);
        fs::remove_all(m_dir);
    }
}

TEST_F(GgufModel, ExpertsStackedPerLayerAreSlicedPerExpert) {
    struct Case {
        const char* type;
        const char* arch;
        std::int64_t shared;
        bool stacked;
    };
    for (const Case& c : {Case{"qwen2_moe", "qwen2moe", 16, true}, Case{"qwen3_moe", "qwen3moe", 0, true},
                          Case{"mixtral", "llama", 0, true}, Case{"mixtral", "llama", 0, false}}) {
        SCOPED_TRACE(std::string(c.type) + (c.stacked ? "" : " (one tensor per expert)"));
        LlamaSpec spec;
        spec.type = c.type;
        spec.experts = 4;
        spec.sharedInner = c.shared;
        spec.normalize = std::string(c.arch) == "qwen3moe";  // what llama.cpp fixes per architecture
        GgufModelOptions o;
        o.arch = c.arch;
        o.stackExperts = c.stacked;
        expectSameAsFolder(spec, o);
        fs::remove_all(m_dir);
    }
}

TEST_F(GgufModel, GemmaNormsStoredPlusOneAreReadBack) {
    for (const char* arch : {"gemma2", "gemma3"}) {
        SCOPED_TRACE(arch);
        LlamaSpec spec;
        spec.type = std::string(arch) == "gemma2" ? "gemma2" : "gemma3_text";
        spec.queryScalar = static_cast<double>(spec.headDim);  // llama.cpp scales by head_dim^−½
        spec.softcap = std::string(arch) == "gemma2" ? 30 : 0;
        spec.window = 3;
        spec.localBase = 10000;  // llama.cpp turns Gemma 3's local layers by 10000 ...
        spec.pattern = std::string(arch) == "gemma2" ? 2 : 6;  // ... and makes every sixth layer global
        spec.layers = std::string(arch) == "gemma2" ? 2 : 6;
        GgufModelOptions o;
        o.arch = arch;
        expectSameAsFolder(spec, o);
        fs::remove_all(m_dir);
    }
}

// Every block format on every matrix (256-wide rows: the K formats' block), the embedding included.
TEST_F(GgufModel, EveryQuantizedTypeReadsAsTheFloatsItsBlocksStandFor) {
    LlamaSpec spec;
    spec.hidden = 256;
    spec.heads = 4;
    spec.kvHeads = 2;
    spec.headDim = 64;
    spec.inner = 256;
    for (GgmlType type : {GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                          GgmlType::Q8_0, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
        SCOPED_TRACE(ggmlTypeName(static_cast<std::uint32_t>(type)));
        GgufModelOptions o;
        o.typeOf = [type](const std::string&) { return type; };
        expectSameAsFolder(spec, o);
        fs::remove_all(m_dir);
    }
}

TEST_F(GgufModel, TheCheckpointSaysHowEachTensorIsStored) {
    LlamaSpec spec;
    spec.hidden = spec.inner = 256;
    spec.headDim = 64;
    GgufModelOptions o;
    o.typeOf = [](const std::string& name) { return name.find("mlp.") != std::string::npos ? GgmlType::Q4_K : GgmlType::Q8_0; };
    fs::create_directories(m_dir);
    writeGgufModel(m_dir / "m.gguf", spec, llamaTensors(spec), o);
    auto opened = ModelCheckpoint::open((m_dir / "m.gguf").string());
    ASSERT_TRUE(opened.ok()) << refusal(opened);
    const StorageTypes types = opened.value()->storageTypes();
    EXPECT_EQ(types.at("Q4_K"), 2 * 3);            // gate, up, down per layer
    EXPECT_EQ(types.at("Q8_0"), 2 * 4 + 1);        // q, k, v, o per layer and the embedding
    EXPECT_EQ(types.at("F32"), 2 * 2 + 1);         // two norms per layer and the final one
    EXPECT_NE(opened.value()->gguf(), nullptr);
}

TEST_F(GgufModel, MalformedOrUnsupportedFilesAreRefusedByRule) {
    LlamaSpec spec;
    fs::create_directories(m_dir);
    const fs::path file = m_dir / "m.gguf";
    auto openWith = [&](GgufModelOptions o, LlamaSpec s) {
        writeGgufModel(file, s, llamaTensors(s), o);
        return refusal(ModelCheckpoint::open(file.string()));
    };
    GgufModelOptions unknown;
    unknown.extraMetadata["general.architecture"] = std::string("mamba");
    EXPECT_NE(openWith(unknown, spec).find("GGUF architecture 'mamba' is not read"), std::string::npos);

    GgufModelOptions iq;
    iq.typeOf = [](const std::string& name) { return name == "layers.1.mlp.up_proj.weight" ? GgmlType::IQ4_NL : GgmlType::F32; };
    LlamaSpec wide = spec;
    wide.hidden = wide.inner = 32;
    wide.headDim = 8;
    EXPECT_NE(openWith(iq, wide).find("tensor 'blk.1.ffn_up.weight' is stored as IQ4_NL, which is not read"), std::string::npos)
        << openWith(iq, wide);

    GgufModelOptions moreBlocks;
    moreBlocks.extraMetadata["llama.block_count"] = 3u;
    EXPECT_NE(openWith(moreBlocks, spec).find("missing tensor 'blk.2.attn_norm.weight'"), std::string::npos) << openWith(moreBlocks, spec);

    GgufModelOptions fewerBlocks;
    fewerBlocks.extraMetadata["llama.block_count"] = 1u;
    EXPECT_NE(openWith(fewerBlocks, spec).find("the file holds 2 blocks, its metadata says 1"), std::string::npos);

    GgufModelOptions wrongHeads;
    wrongHeads.extraMetadata["llama.attention.head_count"] = 2u;
    EXPECT_NE(openWith(wrongHeads, spec).find("tensor 'blk.0.attn_q.weight' has shape [32, 24]"), std::string::npos)
        << openWith(wrongHeads, spec);

    GgufModelOptions perLayer;
    perLayer.extraMetadata["llama.feed_forward_length"] = std::vector<std::int32_t>{40, 40};
    EXPECT_NE(openWith(perLayer, spec).find("'llama.feed_forward_length' is a list"), std::string::npos);

    GgufModelOptions noArch;
    noArch.extraMetadata["general.architecture"] = 7u;
    EXPECT_NE(openWith(noArch, spec).find("'general.architecture' is missing"), std::string::npos);
}
