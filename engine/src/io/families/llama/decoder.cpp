#include "io/families/llama/decoder.h"

#include "io/families/softmax_layer.h"

namespace attnscope::engine {

using namespace config_fields;

namespace {

Result<void> readYarn(const FieldReader& scaling, std::int64_t maxPositions, RopeSettings& rope);
Result<void> readLongrope(const FieldReader& f, const FieldReader& scaling, const Json& node, std::int64_t maxPositions,
                          std::int64_t headDim, RopeSettings& rope);

}  // namespace

// rope_scaling (null or an object): its type under "rope_type" (or the older "type").
Result<void> readRopeScaling(const FieldReader& f, const Json& root, std::int64_t maxPositions, std::int64_t headDim,
                             RopeSettings& rope) {
    const auto it = root.find("rope_scaling");
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_object()) return f.fail("rope_scaling", "must be null or an object");
    const FieldReader scaling(*it, f.source() + ": rope_scaling");
    std::string type;
    ATTNSCOPE_TRY_ASSIGN(type, scaling.text("rope_type", ""));
    if (type.empty()) ATTNSCOPE_TRY_ASSIGN(type, scaling.text("type", "default"));
    if (type == "default") return {};
    if (type == "su") type = "longrope";  // Phi-3's first name for it
    if (type != "linear" && type != "dynamic" && type != "llama3" && type != "yarn" && type != "longrope")
        return Error{ErrorCode::Unsupported, f.source() + ": rope_scaling type '" + type +
                                                 "' is not computed (linear, dynamic, llama3, yarn and longrope are)"};
    rope.scaling = type;
    if (type == "longrope") return readLongrope(f, scaling, *it, maxPositions, headDim, rope);
    // (linear, dynamic and llama3 need their factor, as the reference's validation says; yarn
    // derives it from the context lengths when absent)
    if (type != "yarn" && !it->contains("factor")) return scaling.fail("factor", "is needed by " + type + " scaling");
    ATTNSCOPE_TRY_ASSIGN(rope.factor, scaling.number("factor", type == "yarn" ? 0.0 : 1.0, 1e-6, 1e6, type == "yarn"));
    ATTNSCOPE_TRY_ASSIGN(rope.lowFreqFactor, scaling.number("low_freq_factor", 1.0, 1e-6, 1e6));
    ATTNSCOPE_TRY_ASSIGN(rope.highFreqFactor, scaling.number("high_freq_factor", 4.0, 1e-6, 1e6));
    ATTNSCOPE_TRY_ASSIGN(rope.originalMaxPositions, scaling.integer("original_max_position_embeddings", 0, 0, kMaxPositions));
    if (type == "llama3" && (rope.originalMaxPositions == 0 || rope.highFreqFactor <= rope.lowFreqFactor))
        return scaling.fail("original_max_position_embeddings",
                            "and high_freq_factor > low_freq_factor are needed by llama3 scaling");
    if (type == "yarn") return readYarn(scaling, maxPositions, rope);
    return {};
}

namespace {

// YaRN's own fields (HF _compute_yarn_parameters): a factor given wins; without one it is
// max_position_embeddings / original_max_position_embeddings.
Result<void> readYarn(const FieldReader& scaling, std::int64_t maxPositions, RopeSettings& rope) {
    if (rope.factor == 0) {
        if (rope.originalMaxPositions == 0)
            return scaling.fail("factor", "is needed by yarn scaling (or original_max_position_embeddings to derive it)");
        rope.factor = static_cast<double>(maxPositions) / static_cast<double>(rope.originalMaxPositions);
    }
    ATTNSCOPE_TRY_ASSIGN(rope.attentionFactor, scaling.number("attention_factor", 0.0, 0.0, 1e3, true));
    // the reference reads `beta_fast or 32`: null and 0 mean the default
    ATTNSCOPE_TRY_ASSIGN(rope.betaFast, scaling.number("beta_fast", 32.0, 0.0, 1e6, true));
    ATTNSCOPE_TRY_ASSIGN(rope.betaSlow, scaling.number("beta_slow", 1.0, 0.0, 1e6, true));
    if (rope.betaFast == 0) rope.betaFast = 32.0;
    if (rope.betaSlow == 0) rope.betaSlow = 1.0;
    if (rope.betaFast < rope.betaSlow) return scaling.fail("beta_fast", "must not be below beta_slow");
    ATTNSCOPE_TRY_ASSIGN(rope.mscale, scaling.number("mscale", 0.0, 0.0, 1e3, true));
    ATTNSCOPE_TRY_ASSIGN(rope.mscaleAllDim, scaling.number("mscale_all_dim", 0.0, 0.0, 1e3, true));
    ATTNSCOPE_TRY_ASSIGN(rope.truncate, scaling.flag("truncate", true));
    return {};
}

// LongRoPE's fields (HF _compute_longrope_parameters): the trained context from the top-level
// original_max_position_embeddings (Phi-3 keeps it there), else rope_scaling's, else
// max_position_embeddings; the factor is max_position_embeddings over it.
Result<void> readFactorList(const FieldReader& scaling, const Json& node, const char* key, std::size_t count,
                            std::vector<double>& out) {
    const auto it = node.find(key);
    if (it == node.end() || !it->is_array() || it->size() != count)
        return scaling.fail(key, "must list " + std::to_string(count) + " numbers (one per rotary frequency)");
    out.clear();
    for (const auto& v : *it) {
        if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
            return scaling.fail(key, "entries must be positive numbers, got " + v.dump());
        out.push_back(v.get<double>());
    }
    return {};
}

Result<void> readLongrope(const FieldReader& f, const FieldReader& scaling, const Json& node, std::int64_t maxPositions,
                          std::int64_t headDim, RopeSettings& rope) {
    const std::size_t frequencies = static_cast<std::size_t>(rope.rotaryDims(headDim) / 2);
    if (auto shortList = readFactorList(scaling, node, "short_factor", frequencies, rope.shortFactor); !shortList) return shortList;
    if (auto longList = readFactorList(scaling, node, "long_factor", frequencies, rope.longFactor); !longList) return longList;
    std::int64_t fromScaling = 0;
    ATTNSCOPE_TRY_ASSIGN(fromScaling, scaling.integer("original_max_position_embeddings", maxPositions, 1, kMaxPositions, true));
    ATTNSCOPE_TRY_ASSIGN(rope.originalMaxPositions, f.integer("original_max_position_embeddings", fromScaling, 1, kMaxPositions, true));
    rope.factor = static_cast<double>(maxPositions) / static_cast<double>(rope.originalMaxPositions);
    ATTNSCOPE_TRY_ASSIGN(rope.attentionFactor, scaling.number("attention_factor", 0.0, 0.0, 1e3, true));
    return {};
}

// A per-layer list of flags from `layer_types` (Qwen2/3: "sliding_attention" or "full_attention").
}  // namespace

Result<void> readLayerTypes(const FieldReader& f, const Json& root, std::int64_t layers, std::vector<std::uint8_t>& sliding) {
    const auto it = root.find("layer_types");
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_array() || static_cast<std::int64_t>(it->size()) != layers)
        return f.fail("layer_types", "must list one entry per layer (" + std::to_string(layers) + ")");
    sliding.clear();
    for (const auto& entry : *it) {
        const std::string type = entry.is_string() ? entry.get<std::string>() : std::string();
        if (type != "sliding_attention" && type != "full_attention")
            return f.fail("layer_types", "entries must be \"sliding_attention\" or \"full_attention\", got " + entry.dump());
        sliding.push_back(type == "sliding_attention" ? 1 : 0);
    }
    return {};
}

std::vector<std::uint8_t> alternatingSlidingLayers(std::int64_t layers, std::int64_t pattern) {
    std::vector<std::uint8_t> sliding(static_cast<std::size_t>(layers));
    for (std::int64_t l = 0; l < layers; ++l) sliding[static_cast<std::size_t>(l)] = (l + 1) % pattern != 0 ? 1 : 0;
    return sliding;
}

// Qwen2 and Qwen3: the window only when use_sliding_window, on layers from max_window_layers on.
Result<void> readQwenWindow(const FieldReader& f, const Json& root, ModelConfig& c) {
    LlamaSettings& l = c.llama;
    bool use = false;
    std::int64_t window = 0, fullLayers = 0;
    ATTNSCOPE_TRY_ASSIGN(use, f.flag("use_sliding_window", false));
    ATTNSCOPE_TRY_ASSIGN(window, f.integer("sliding_window", 4096, 0, kMaxPositions, true));
    ATTNSCOPE_TRY_ASSIGN(fullLayers, f.integer("max_window_layers", 28, 0, kMaxLayers));
    if (!use || window == 0) return {};
    l.slidingWindow = window;
    l.slidingLayers.assign(static_cast<std::size_t>(c.numLayers), 0);
    for (std::int64_t layer = fullLayers; layer < c.numLayers; ++layer) l.slidingLayers[static_cast<std::size_t>(layer)] = 1;
    return readLayerTypes(f, root, c.numLayers, l.slidingLayers);
}

Result<void> readAttentionBias(const FieldReader& f, ModelConfig& c) {
    ATTNSCOPE_TRY_ASSIGN(c.llama.qkvBias, f.flag("attention_bias", false));
    c.llama.outputBias = c.llama.qkvBias;
    return {};
}

Result<void> readSlidingWindow(const FieldReader& f, ModelConfig& c) {
    ATTNSCOPE_TRY_ASSIGN(c.llama.slidingWindow, f.integer("sliding_window", 0, 0, kMaxPositions, true));
    return {};
}

Result<void> readExpertFields(const FieldReader& f, ModelConfig& c, const ExpertFields& fields) {
    ATTNSCOPE_TRY_ASSIGN(c.moe.experts, f.integer(fields.countKey, fields.count, 1, 4096));
    ATTNSCOPE_TRY_ASSIGN(c.moe.topK, f.integer("num_experts_per_tok", fields.topK, 1, c.moe.experts));
    ATTNSCOPE_TRY_ASSIGN(c.moe.auxLossCoef, f.number("router_aux_loss_coef", fields.auxLossCoef, 0.0, 1e6));
    c.moe.normalizeTopK = true;
    if (!fields.alwaysNormalized) ATTNSCOPE_TRY_ASSIGN(c.moe.normalizeTopK, f.flag("norm_topk_prob", false));
    c.moe.capacityFactor = 0;  // dropless, as their sparse blocks compute
    c.moe.zLossCoef = 0;
    c.llama.expertLayout = fields.layout;
    c.llama.expertInner = c.intermediateSize;
    return {};
}

Result<void> readDecoderConfig(const FieldReader& f, const Json& root, ModelConfig& c, const DecoderTraits& d) {
    LlamaSettings& l = c.llama;
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", d.vocab, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("hidden_size", d.hidden, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.intermediateSize, f.integer("intermediate_size", d.intermediate, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("num_hidden_layers", d.layers, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("num_attention_heads", d.heads, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(c.kvHeads, f.integer("num_key_value_heads", c.numHeads, 1, kMaxHeads, true));
    if (c.numHeads % c.kvHeads != 0)
        return f.fail("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(c.numHeads) + ")");
    c.headSize = c.hiddenSize / c.numHeads;
    if (d.readsHeadDim) ATTNSCOPE_TRY_ASSIGN(c.headSize, f.integer("head_dim", d.headDim > 0 ? d.headDim : c.headSize, 1, kMaxHidden, true));
    if (c.headSize % 2 != 0) return f.fail("head_dim", "must be even (rotary positions turn pairs of features)");
    ATTNSCOPE_TRY_ASSIGN(c.maxPositions, f.integer("max_position_embeddings", d.maxPositions, 1, kMaxPositions));
    ATTNSCOPE_TRY_ASSIGN(c.layerNormEps, f.number("rms_norm_eps", d.eps, 1e-30, 1.0));
    ATTNSCOPE_TRY_ASSIGN(l.rope.theta, f.number("rope_theta", d.theta, 1.0, 1e12));
    ATTNSCOPE_TRY_ASSIGN(l.mlpBias, f.flag("mlp_bias", false));
    ATTNSCOPE_TRY_ASSIGN(c.bosTokenId, f.integer("bos_token_id", d.bos, -1, kMaxVocab, true));
    if (auto stops = readStopTokens(f, root, c); !stops) return stops.error();
    if (auto attention = d.readAttention ? d.readAttention(f, root, c) : readAttentionBias(f, c); !attention) return attention.error();
    if (d.readExperts)
        if (auto experts = d.readExperts(f, root, c); !experts) return experts.error();
    ATTNSCOPE_TRY_ASSIGN(c.activation, parseActivation(f, d.activationKey, d.activation));
    if (!d.gelu && c.activation != Activation::Silu) return f.fail(d.activationKey, "must be silu for a SwiGLU MLP");
    if (d.gelu && c.activation != Activation::GeluTanh && c.activation != Activation::GeluErf)
        return f.fail(d.activationKey, "must be a GeLU (gelu_pytorch_tanh, gelu) for a GeGLU MLP");
    if (auto rope = readRopeScaling(f, root, c.maxPositions, c.headSize, l.rope); !rope) return rope.error();
    c.typeVocabSize = 0;
    c.causal = true;
    return {};
}

std::string decoderLayerPrefix(std::int64_t layer) { return "layers." + std::to_string(layer) + "."; }

std::string decoderRouterWeight(const ModelConfig& c, const std::string& layerPrefix) {
    if (c.llama.expertLayout == ExpertLayout::GptOss) return layerPrefix + "mlp.router.weight";
    return layerPrefix + (c.llama.expertLayout == ExpertLayout::Mixtral ? "block_sparse_moe.gate.weight" : "mlp.gate.weight");
}

DecoderExpertNames decoderExpertNames(const ModelConfig& c, const std::string& layerPrefix, std::int64_t expert) {
    const std::string e = std::to_string(expert);
    if (c.llama.expertLayout == ExpertLayout::Mixtral) {
        const std::string p = layerPrefix + "block_sparse_moe.experts." + e + ".";
        return {p + "w1.weight", p + "w3.weight", p + "w2.weight"};
    }
    const std::string p = layerPrefix + "mlp.experts." + e + ".";
    return {p + "gate_proj.weight", p + "up_proj.weight", p + "down_proj.weight"};
}

// eos_token_id: one id, a list of them (Llama 3.1's three), or null.
Result<void> readStopTokens(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    const auto it = root.find("eos_token_id");
    if (it == root.end() || it->is_null()) return {};
    const nlohmann::json list = it->is_array() ? *it : nlohmann::json::array({*it});
    for (const auto& id : list) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= config_fields::kMaxVocab)
            return f.fail("eos_token_id", "must be a token id or a list of them, got " + it->dump());
        c.stopTokenIds.push_back(id.get<std::int64_t>());
    }
    return {};
}

// Which layers are sparse: every decoder_sparse_step-th, minus those mlp_only_layers lists.
Result<void> readDecoderSparseLayers(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    std::int64_t step = 1;
    ATTNSCOPE_TRY_ASSIGN(step, f.integer("decoder_sparse_step", 1, 1, config_fields::kMaxLayers));
    c.sparseLayers.assign(static_cast<std::size_t>(c.numLayers), 0);
    for (std::int64_t layer = 0; layer < c.numLayers; ++layer)
        c.sparseLayers[static_cast<std::size_t>(layer)] = (layer + 1) % step == 0 ? 1 : 0;
    const auto it = root.find("mlp_only_layers");
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_array()) return f.fail("mlp_only_layers", "must be a list of layer indices");
    for (const auto& entry : *it) {
        if (!entry.is_number_integer() || entry.get<std::int64_t>() < 0 || entry.get<std::int64_t>() >= c.numLayers)
            return f.fail("mlp_only_layers", "entries must be layer indices in [0, " + std::to_string(c.numLayers - 1) +
                                                 "], got " + entry.dump());
        c.sparseLayers[static_cast<std::size_t>(entry.get<std::int64_t>())] = 0;
    }
    return {};
}

std::vector<ExpectedTensor> decoderTensors(const ModelConfig& c) {
    const LlamaSettings& l = c.llama;
    const std::int64_t h = c.hiddenSize, q = c.numHeads * c.headSize, kv = c.kvHeads * c.headSize, inner = c.intermediateSize;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape) { out.push_back({std::move(name), std::move(shape)}); };
    auto linear = [&](const std::string& name, std::int64_t rows, std::int64_t cols, bool bias) {
        add(name + ".weight", {rows, cols});
        if (bias) add(name + ".bias", {rows});
    };
    auto swiglu = [&](const DecoderExpertNames& names, std::int64_t width) {
        add(names.gate, {width, h});
        add(names.up, {width, h});
        add(names.down, {h, width});
    };
    add("embed_tokens.weight", {c.vocabSize, h});
    for (std::int64_t layer = 0; layer < c.numLayers; ++layer) {
        const std::string p = decoderLayerPrefix(layer);
        add(p + "input_layernorm.weight", {h});
        if (l.fusedProjections) {
            linear(p + "self_attn.qkv_proj", q + 2 * kv, h, l.qkvBias);
        } else {
            linear(p + "self_attn.q_proj", q, h, l.qkvBias);
            linear(p + "self_attn.k_proj", kv, h, l.qkvBias);
            linear(p + "self_attn.v_proj", kv, h, l.qkvBias);
        }
        linear(p + "self_attn.o_proj", h, q, l.outputBias);
        if (l.qkNorm != QkNorm::None) {
            const bool perHead = l.qkNorm == QkNorm::PerHead;
            add(p + "self_attn.q_norm.weight", {perHead ? c.headSize : q});
            add(p + "self_attn.k_norm.weight", {perHead ? c.headSize : kv});
        }
        add(p + "post_attention_layernorm.weight", {h});
        if (c.switchLayer(layer)) {
            add(decoderRouterWeight(c, p), {c.moe.experts, h});
            for (std::int64_t e = 0; e < c.moe.experts; ++e) swiglu(decoderExpertNames(c, p, e), l.expertInner);
            if (l.sharedExpertInner > 0) {
                swiglu({p + "mlp.shared_expert.gate_proj.weight", p + "mlp.shared_expert.up_proj.weight",
                        p + "mlp.shared_expert.down_proj.weight"},
                       l.sharedExpertInner);
                add(p + "mlp.shared_expert_gate.weight", {1, h});
            }
            continue;
        }
        if (l.fusedProjections) {
            linear(p + "mlp.gate_up_proj", 2 * inner, h, l.mlpBias);
        } else {
            linear(p + "mlp.gate_proj", inner, h, l.mlpBias);
            linear(p + "mlp.up_proj", inner, h, l.mlpBias);
        }
        linear(p + "mlp.down_proj", h, inner, l.mlpBias);
    }
    add("norm.weight", {h});
    return out;
}

LayerAttention decoderAttention(const ModelConfig& c, std::int64_t layer) {
    SoftmaxLayerTerms terms;
    terms.causal = true;
    if (c.llama.slides(layer)) terms.window = c.llama.slidingWindow;
    terms.positions = "rotary positions";
    if (c.kvHeads < c.numHeads)
        terms.positions += ", " + std::to_string(c.numHeads / c.kvHeads) + " query heads per key/value head";
    return softmaxLayer(terms);
}

const RopeSettings* decoderRope(const ModelConfig& c, std::int64_t) { return &c.llama.rope; }

std::vector<std::string> decoderNotices(const ModelConfig& c) {
    if (c.llama.slidingWindow <= 0) return {};
    std::int64_t sliding = 0;
    for (std::int64_t l = 0; l < c.numLayers; ++l) sliding += c.llama.slides(l) ? 1 : 0;
    if (sliding == 0) return {};
    return {"sliding window of " + std::to_string(c.llama.slidingWindow) + " keys on " +
            (sliding == c.numLayers ? std::string("every layer") : std::to_string(sliding) + " of " + std::to_string(c.numLayers) + " layers") +
            ": the model's own attention keeps only those; a variant run on a layer sees every earlier key unless its "
            "parameters narrow it"};
}

void completeLlamaGgufConfig(nlohmann::json& config, const std::function<bool(const std::string&)>& has) {
    // llama.cpp uses a `llama` file's biases when their tensors are there
    if (has("blk.0.attn_q.bias")) config["attention_bias"] = true;
    if (has("blk.0.ffn_up.bias")) config["mlp_bias"] = true;
}

FamilyEntry decoderEntry() {
    FamilyEntry e;
    e.tensors = &decoderTensors;
    e.prefixes = {"model.", ""};
    e.layerStem = "layers.";
    e.expertLayersFrom = [](const ModelConfig&) { return std::string("decoder_sparse_step, mlp_only_layers"); };
    e.ownAttention = &decoderAttention;
    e.layerByLayer = true;
    e.rope = &decoderRope;
    e.openNotices = &decoderNotices;
    return e;
}

}  // namespace attnscope::engine
