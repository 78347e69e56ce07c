// `gpt_oss`: GPT-OSS (OpenAI 2025), a Llama-like decoder whose attention has biases on q, k, v and
// o, a learned sink logit per head in every row's softmax (`self_attn.sinks`), a 128-key sliding
// window on every other layer from layer 0 on, YaRN rotary positions; and a sparse MLP in every
// layer: a router with a bias whose top num_experts_per_tok logits are soft-maxed into gates, each
// expert's clamped SwiGLU (gate ≤ limit, |up| ≤ limit, (up + 1) · gate · σ(1.702 · gate)) with
// biases, its experts fused per layer (mlp.experts.gate_up_proj, gate and up interleaved) in
// BF16 or in MXFP4 blocks and scales.

#include "io/families/llama/decoder.h"
#include "io/families/softmax_layer.h"

namespace attnscope::engine::families::gpt_oss {
namespace {

using namespace config_fields;

// The config class's rope_scaling when config.json has none: YaRN, factor 32 over 4,096 positions.
void defaultYarn(RopeSettings& rope) {
    rope.scaling = "yarn";
    rope.factor = 32.0;
    rope.betaFast = 32.0;
    rope.betaSlow = 1.0;
    rope.truncate = false;
    rope.originalMaxPositions = 4096;
}

Result<void> readAttention(const FieldReader& f, const Json& root, ModelConfig& c) {
    c.llama.qkvBias = true;  // the config class sets attention_bias, whatever the file says
    c.llama.outputBias = true;
    ATTNSCOPE_TRY_ASSIGN(c.llama.slidingWindow, f.integer("sliding_window", 128, 0, kMaxPositions, true));
    c.llama.slidingLayers = alternatingSlidingLayers(c.numLayers, 2);
    if (auto types = readLayerTypes(f, root, c.numLayers, c.llama.slidingLayers); !types) return types;
    ATTNSCOPE_TRY_ASSIGN(c.gptOss.swigluLimit, f.number("swiglu_limit", 7.0, 1e-6, 1e6));
    if (!root.contains("rope_scaling")) defaultYarn(c.llama.rope);
    return {};
}

Result<void> readExperts(const FieldReader& f, const Json&, ModelConfig& c) {
    ExpertFields fields;
    fields.countKey = "num_local_experts";
    fields.count = 128;
    fields.topK = 4;
    fields.alwaysNormalized = true;  // softmax over the chosen logits: the chosen gates renormalised
    fields.auxLossCoef = 0.9;
    fields.layout = ExpertLayout::GptOss;
    return readExpertFields(f, c, fields);
}

Result<void> readConfig(const FieldReader& f, const Json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.vocab = 201088;
    traits.hidden = 2880;
    traits.intermediate = 2880;
    traits.layers = 36;
    traits.heads = 64;
    traits.headDim = 64;
    traits.maxPositions = 131072;
    traits.eps = 1e-5;
    traits.theta = 150000.0;
    traits.readAttention = &readAttention;
    traits.readExperts = &readExperts;
    return readDecoderConfig(f, root, c, traits);
}

std::vector<ExpectedTensor> tensors(const ModelConfig& c) {
    const std::int64_t h = c.hiddenSize, q = c.numHeads * c.headSize, kv = c.kvHeads * c.headSize;
    const std::int64_t experts = c.moe.experts, inner = c.llama.expertInner;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape, WeightRead read = WeightRead::Whole) {
        out.push_back({std::move(name), std::move(shape), read});
    };
    add("embed_tokens.weight", {c.vocabSize, h});
    for (std::int64_t layer = 0; layer < c.numLayers; ++layer) {
        const std::string p = decoderLayerPrefix(layer), a = p + "self_attn.", e = p + "mlp.experts.";
        add(p + "input_layernorm.weight", {h});
        for (const auto& [name, rows, cols] : {std::tuple<const char*, std::int64_t, std::int64_t>{"q_proj", q, h},
                                               {"k_proj", kv, h}, {"v_proj", kv, h}, {"o_proj", h, q}}) {
            add(a + name + ".weight", {rows, cols});
            add(a + name + ".bias", {rows});
        }
        add(a + "sinks", {c.numHeads});
        add(p + "post_attention_layernorm.weight", {h});
        add(decoderRouterWeight(c, p), {experts, h});
        add(p + "mlp.router.bias", {experts});
        if (c.gptOss.mxfp4) {  // [E, out, in / 32, 16] and [E, out, in / 32]: Linear's layout
            add(e + "gate_up_proj_blocks", {experts, 2 * inner, h / 32, 16}, WeightRead::PackedBlocks);
            add(e + "gate_up_proj_scales", {experts, 2 * inner, h / 32}, WeightRead::PackedScales);
            add(e + "down_proj_blocks", {experts, h, inner / 32, 16}, WeightRead::PackedBlocks);
            add(e + "down_proj_scales", {experts, h, inner / 32}, WeightRead::PackedScales);
        } else {  // [E, in, out]: x · W
            add(e + "gate_up_proj", {experts, h, 2 * inner}, WeightRead::Sliced);
            add(e + "down_proj", {experts, inner, h}, WeightRead::Sliced);
        }
        add(e + "gate_up_proj_bias", {experts, 2 * inner});
        add(e + "down_proj_bias", {experts, h});
    }
    add("norm.weight", {h});
    return out;
}

// The released checkpoints keep the experts in MXFP4: read so when the blocks are there.
void adaptToFile(ModelConfig& c, const std::function<bool(const std::string&)>& has, std::vector<std::string>& warnings) {
    c.gptOss.mxfp4 = has(decoderLayerPrefix(0) + "mlp.experts.gate_up_proj_blocks");
    if (c.gptOss.mxfp4)
        warnings.push_back("experts stored in MXFP4 (4-bit values, one power-of-two scale per 32): dequantized one expert "
                           "at a time, exactly");
}

LayerAttention ownAttention(const ModelConfig& c, std::int64_t layer) {
    SoftmaxLayerTerms terms;
    terms.causal = true;
    if (c.llama.slides(layer)) terms.window = c.llama.slidingWindow;
    terms.sinks = true;
    terms.positions = "rotary positions";
    if (c.kvHeads < c.numHeads)
        terms.positions += ", " + std::to_string(c.numHeads / c.kvHeads) + " query heads per key/value head";
    return softmaxLayer(terms);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "gpt_oss";
    e.name = "GPT-OSS";
    e.reference = "transformers' GptOssModel (modeling_gpt_oss.py)";
    e.readConfig = &readConfig;
    e.tensors = &tensors;
    e.adaptToFile = &adaptToFile;
    e.expertLayersFrom = [](const ModelConfig&) { return std::string("num_local_experts: every layer"); };
    e.ownAttention = &ownAttention;
    e.tokenizer = TokenizerFiles::JsonOnly;
    return e;
}

}  // namespace attnscope::engine::families::gpt_oss
