#include "checkpoint/llama_checkpoint.h"

namespace attnscope::engine {

using namespace config_fields;

namespace {

// rope_scaling (null or an object): its type under "rope_type" (or the older "type").
Result<void> readRopeScaling(const FieldReader& f, const Json& root, RopeSettings& rope) {
    const auto it = root.find("rope_scaling");
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_object()) return f.fail("rope_scaling", "must be null or an object");
    const FieldReader scaling(*it, f.source() + ": rope_scaling");
    std::string type;
    ATTNSCOPE_TRY_ASSIGN(type, scaling.text("rope_type", ""));
    if (type.empty()) ATTNSCOPE_TRY_ASSIGN(type, scaling.text("type", "default"));
    if (type == "default") return {};
    if (type != "linear" && type != "dynamic" && type != "llama3")
        return Error{ErrorCode::Unsupported, f.source() + ": rope_scaling type '" + type +
                                                 "' is not computed (linear, dynamic and llama3 are)"};
    rope.scaling = type;
    ATTNSCOPE_TRY_ASSIGN(rope.factor, scaling.number("factor", 1.0, 1e-6, 1e6));
    ATTNSCOPE_TRY_ASSIGN(rope.lowFreqFactor, scaling.number("low_freq_factor", 1.0, 1e-6, 1e6));
    ATTNSCOPE_TRY_ASSIGN(rope.highFreqFactor, scaling.number("high_freq_factor", 4.0, 1e-6, 1e6));
    ATTNSCOPE_TRY_ASSIGN(rope.originalMaxPositions, scaling.integer("original_max_position_embeddings", 0, 0, kMaxPositions));
    if (type == "llama3" && (rope.originalMaxPositions == 0 || rope.highFreqFactor <= rope.lowFreqFactor))
        return scaling.fail("original_max_position_embeddings",
                            "and high_freq_factor > low_freq_factor are needed by llama3 scaling");
    return {};
}

}  // namespace

Result<void> readLlamaConfig(const FieldReader& f, const Json& root, ModelConfig& c) {
    LlamaSettings& l = c.llama;
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", 32000, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("hidden_size", 4096, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.intermediateSize, f.integer("intermediate_size", 11008, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("num_hidden_layers", 32, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("num_attention_heads", 32, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(l.kvHeads, f.integer("num_key_value_heads", c.numHeads, 1, kMaxHeads, true));
    if (c.numHeads % l.kvHeads != 0)
        return f.fail("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(c.numHeads) + ")");
    ATTNSCOPE_TRY_ASSIGN(l.headDim, f.integer("head_dim", c.hiddenSize / c.numHeads, 1, kMaxHidden, true));
    if (l.headDim % 2 != 0) return f.fail("head_dim", "must be even (rotary positions turn pairs of features)");
    ATTNSCOPE_TRY_ASSIGN(c.maxPositions, f.integer("max_position_embeddings", 2048, 1, kMaxPositions));
    ATTNSCOPE_TRY_ASSIGN(c.layerNormEps, f.number("rms_norm_eps", 1e-6, 1e-30, 1.0));
    ATTNSCOPE_TRY_ASSIGN(l.rope.theta, f.number("rope_theta", 10000.0, 1.0, 1e12));
    ATTNSCOPE_TRY_ASSIGN(l.attentionBias, f.flag("attention_bias", false));
    ATTNSCOPE_TRY_ASSIGN(l.mlpBias, f.flag("mlp_bias", false));
    ATTNSCOPE_TRY_ASSIGN(l.bosTokenId, f.integer("bos_token_id", 1, -1, kMaxVocab, true));
    if (c.modelType == "mistral" || c.modelType == "mixtral")
        ATTNSCOPE_TRY_ASSIGN(l.slidingWindow, f.integer("sliding_window", 0, 0, kMaxPositions, true));
    if (c.modelType == "mixtral") {
        // HF MixtralSparseMoeBlock: softmax over all experts, the top k, renormalised, no capacity
        ATTNSCOPE_TRY_ASSIGN(c.moe.experts, f.integer("num_local_experts", 8, 1, 4096));
        ATTNSCOPE_TRY_ASSIGN(c.moe.topK, f.integer("num_experts_per_tok", 2, 1, c.moe.experts));
        ATTNSCOPE_TRY_ASSIGN(c.moe.auxLossCoef, f.number("router_aux_loss_coef", 0.001, 0.0, 1e6));
        c.moe.normalizeTopK = true;
        c.moe.capacityFactor = 0;
        c.moe.zLossCoef = 0;
    }
    ATTNSCOPE_TRY_ASSIGN(c.activation, parseActivation(f, "hidden_act", "silu"));
    if (c.activation != Activation::Silu) return f.fail("hidden_act", "must be silu for a SwiGLU MLP");
    if (auto rope = readRopeScaling(f, root, l.rope); !rope) return rope.error();
    c.typeVocabSize = 0;
    c.causal = true;
    return {};
}

std::string llamaLayerPrefix(std::int64_t layer) { return "layers." + std::to_string(layer) + "."; }

std::string mixtralExpertPrefix(const std::string& layerPrefix, std::int64_t expert) {
    return layerPrefix + "block_sparse_moe.experts." + std::to_string(expert) + ".";
}

std::vector<ExpectedTensor> expectedLlamaTensors(const ModelConfig& c) {
    const LlamaSettings& l = c.llama;
    const std::int64_t h = c.hiddenSize, q = c.numHeads * l.headDim, kv = l.kvHeads * l.headDim, inner = c.intermediateSize;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape) { out.push_back({std::move(name), std::move(shape)}); };
    auto linear = [&](const std::string& name, std::int64_t rows, std::int64_t cols, bool bias) {
        add(name + ".weight", {rows, cols});
        if (bias) add(name + ".bias", {rows});
    };
    add("embed_tokens.weight", {c.vocabSize, h});
    for (std::int64_t layer = 0; layer < c.numLayers; ++layer) {
        const std::string p = llamaLayerPrefix(layer);
        add(p + "input_layernorm.weight", {h});
        linear(p + "self_attn.q_proj", q, h, l.attentionBias);
        linear(p + "self_attn.k_proj", kv, h, l.attentionBias);
        linear(p + "self_attn.v_proj", kv, h, l.attentionBias);
        linear(p + "self_attn.o_proj", h, q, l.attentionBias);
        add(p + "post_attention_layernorm.weight", {h});
        if (c.moe.active()) {
            add(p + "block_sparse_moe.gate.weight", {c.moe.experts, h});
            for (std::int64_t e = 0; e < c.moe.experts; ++e) {
                const std::string x = mixtralExpertPrefix(p, e);
                add(x + "w1.weight", {inner, h});
                add(x + "w2.weight", {h, inner});
                add(x + "w3.weight", {inner, h});
            }
            continue;
        }
        linear(p + "mlp.gate_proj", inner, h, l.mlpBias);
        linear(p + "mlp.up_proj", inner, h, l.mlpBias);
        linear(p + "mlp.down_proj", h, inner, l.mlpBias);
    }
    add("norm.weight", {h});
    return out;
}

}  // namespace attnscope::engine
