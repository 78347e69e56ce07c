// config.json read as data (FORMATS.md §1.5, §1.6): only the fields the forward pass needs, each
// type- and range-checked before anything is allocated from it.

#include <attnscope/model_checkpoint.h>

#include "checkpoint/config_fields.h"
#include "checkpoint/llama_checkpoint.h"
#include "checkpoint/switch_transformers_tensors.h"
#include "checkpoint/transfo_xl_tensors.h"
#include "checkpoint/vit_checkpoint.h"
#include "plain/strict_json.h"

#include <cmath>
#include <optional>

namespace attnscope::engine {
namespace {

using Json = nlohmann::json;
using namespace config_fields;

Result<void> readBertLike(const FieldReader& f, ModelConfig& c) {
    const bool roberta = c.arch == ModelArch::Roberta;
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", roberta ? 50265 : 30522, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("hidden_size", 768, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("num_hidden_layers", 12, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("num_attention_heads", 12, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(c.intermediateSize, f.integer("intermediate_size", 3072, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.maxPositions, f.integer("max_position_embeddings", roberta ? 514 : 512, 1, kMaxPositions));
    ATTNSCOPE_TRY_ASSIGN(c.typeVocabSize, f.integer("type_vocab_size", roberta ? 1 : 2, 0, kMaxTypeVocab));
    ATTNSCOPE_TRY_ASSIGN(c.layerNormEps, f.number("layer_norm_eps", roberta ? 1e-5 : 1e-12, 1e-30, 1.0));
    ATTNSCOPE_TRY_ASSIGN(c.padTokenId, f.integer("pad_token_id", roberta ? 1 : 0, -1, kMaxVocab, true));
    ATTNSCOPE_TRY_ASSIGN(c.activation, parseActivation(f, "hidden_act", "gelu"));
    std::string positions;
    ATTNSCOPE_TRY_ASSIGN(positions, f.text("position_embedding_type", "absolute"));
    if (positions != "absolute")
        return Error{ErrorCode::Unsupported, f.source() + ": position_embedding_type '" + positions +
                                                 "' is not supported (only 'absolute')"};
    bool decoder = false;
    ATTNSCOPE_TRY_ASSIGN(decoder, f.flag("is_decoder", false));
    if (decoder) c.notices.push_back(f.source() + ": is_decoder is set; attention is computed causally as the config says");
    c.causal = decoder;
    ATTNSCOPE_TRY_ASSIGN(c.moe.experts, f.integer("num_experts", 0, 0, 4096));
    if (c.moe.active()) {
        ATTNSCOPE_TRY_ASSIGN(c.moe.capacityFactor, f.number("capacity_factor", 1.25, 0.0, 1e6));
        ATTNSCOPE_TRY_ASSIGN(c.moe.expertCapacity, f.integer("expert_capacity", 0, 0, std::int64_t{1} << 40, true));
        ATTNSCOPE_TRY_ASSIGN(c.moe.auxLossCoef, f.number("router_aux_loss_coef", 0.01, 0.0, 1e6));
        ATTNSCOPE_TRY_ASSIGN(c.moe.zLossCoef, f.number("router_z_loss_coef", 0.0, 0.0, 1e6));
    }
    if (roberta) {
        if (c.padTokenId < 0) return f.fail("pad_token_id", "must be set for RoBERTa (positions start after it)");
        c.positionOffset = c.padTokenId + 1;
        if (c.positionOffset >= c.maxPositions)
            return f.fail("max_position_embeddings", "leaves no usable position after the offset pad_token_id + 1 = " +
                                                         std::to_string(c.positionOffset));
    }
    return {};
}

Result<void> readGpt2(const FieldReader& f, ModelConfig& c) {
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", 50257, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("n_embd", 768, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("n_layer", 12, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("n_head", 12, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(c.intermediateSize, f.integer("n_inner", 4 * c.hiddenSize, 1, kMaxIntermediate, true));
    ATTNSCOPE_TRY_ASSIGN(c.maxPositions, f.integer("n_positions", 1024, 1, kMaxPositions));
    ATTNSCOPE_TRY_ASSIGN(c.layerNormEps, f.number("layer_norm_epsilon", 1e-5, 1e-30, 1.0));
    ATTNSCOPE_TRY_ASSIGN(c.activation, parseActivation(f, "activation_function", "gelu_new"));
    bool scaled = true, byLayer = false;
    ATTNSCOPE_TRY_ASSIGN(scaled, f.flag("scale_attn_weights", true));
    ATTNSCOPE_TRY_ASSIGN(byLayer, f.flag("scale_attn_by_inverse_layer_idx", false));
    if (!scaled || byLayer)
        return Error{ErrorCode::Unsupported, f.source() + ": only GPT-2 attention scaled by 1/sqrt(head dim) is supported "
                                                          "(scale_attn_weights true, scale_attn_by_inverse_layer_idx false)"};
    c.typeVocabSize = 0;
    c.causal = true;
    return {};
}

// Transformer-XL as Hugging Face's TransfoXLConfig names it. Only the case without adaptive
// embeddings is read (div_val 1, no cutoffs, d_embed = d_model), with the default attention.
Result<void> readTransfoXl(const FieldReader& f, const Json& root, ModelConfig& c) {
    TransfoXlSettings& x = c.transfoXl;
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", 256, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("d_model", 1024, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("n_head", 16, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(x.headDim, f.integer("d_head", 64, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.intermediateSize, f.integer("d_inner", 4096, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("n_layer", 18, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(x.memLen, f.integer("mem_len", 0, 0, kMaxPositions));
    ATTNSCOPE_TRY_ASSIGN(x.tgtLen, f.integer("tgt_len", 128, 1, kMaxPositions));
    ATTNSCOPE_TRY_ASSIGN(x.clampLen, f.integer("clamp_len", -1, -1, kMaxPositions));
    ATTNSCOPE_TRY_ASSIGN(x.sameLength, f.flag("same_length", false));
    ATTNSCOPE_TRY_ASSIGN(x.untieR, f.flag("untie_r", true));
    ATTNSCOPE_TRY_ASSIGN(x.preLnorm, f.flag("pre_lnorm", false));
    ATTNSCOPE_TRY_ASSIGN(c.layerNormEps, f.number("layer_norm_epsilon", 1e-5, 1e-30, 1.0));
    std::int64_t divVal = 1, embed = 0, attnType = 0;
    ATTNSCOPE_TRY_ASSIGN(divVal, f.integer("div_val", 1, 1, 1 << 20));
    ATTNSCOPE_TRY_ASSIGN(embed, f.integer("d_embed", c.hiddenSize, 1, kMaxHidden, true));
    ATTNSCOPE_TRY_ASSIGN(attnType, f.integer("attn_type", 0, 0, 3));
    const auto cutoffs = root.find("cutoffs");
    const bool adaptive = divVal != 1 || (cutoffs != root.end() && !(cutoffs->is_array() && cutoffs->empty()));
    if (adaptive || embed != c.hiddenSize)
        return Error{ErrorCode::Unsupported, f.source() + ": adaptive embeddings are not read (div_val " +
                                                 std::to_string(divVal) + ", cutoffs " +
                                                 (cutoffs == root.end() ? std::string("absent") : cutoffs->dump()) +
                                                 ", d_embed " + std::to_string(embed) +
                                                 "): only div_val 1 without cutoffs and d_embed = d_model is read"};
    if (attnType != 0)
        return f.fail("attn_type", "must be 0 (relative partial learnable attention, the paper's); got " + std::to_string(attnType));
    if (x.sameLength && x.memLen == 0) return f.fail("same_length", "needs mem_len >= 1");
    if (c.hiddenSize % 2 != 0) return f.fail("d_model", "must be even (the relative encoding is [sin | cos] halves)");
    c.maxPositions = kMaxPositions;  // read in segments: no position table bounds the text
    c.typeVocabSize = 0;
    c.activation = Activation::Relu;
    c.causal = true;
    return {};
}

// The encoder of a Switch Transformers checkpoint (Hugging Face SwitchTransformersConfig names and
// defaults). HF derives encoder_sparse_step from num_sparse_encoder_layers unless the file holds
// the step itself, which then wins; a gated FFN (v1.1's "gated-gelu") has no HF Switch layer.
Result<void> readSwitchTransformers(const FieldReader& f, ModelConfig& c) {
    T5Settings& t = c.t5;
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", 32128, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("d_model", 768, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(t.headDim, f.integer("d_kv", 64, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.intermediateSize, f.integer("d_ff", 2048, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("num_layers", 12, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("num_heads", 12, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(c.moe.experts, f.integer("num_experts", 8, 1, 4096));
    ATTNSCOPE_TRY_ASSIGN(c.moe.expertCapacity, f.integer("expert_capacity", 64, 1, std::int64_t{1} << 40));
    c.moe.capacityFactor = 0;  // the slots are the fixed expert_capacity
    std::int64_t sparseLayers = 3;
    ATTNSCOPE_TRY_ASSIGN(sparseLayers, f.integer("num_sparse_encoder_layers", 3, 0, c.numLayers));
    ATTNSCOPE_TRY_ASSIGN(t.sparseStep, f.integer("encoder_sparse_step", sparseLayers > 0 ? c.numLayers / sparseLayers : 0, 0,
                                                 kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(t.routerBias, f.flag("router_bias", false));
    ATTNSCOPE_TRY_ASSIGN(t.relativeBuckets, f.integer("relative_attention_num_buckets", 32, 4, 1 << 16));
    ATTNSCOPE_TRY_ASSIGN(t.relativeMaxDistance, f.integer("relative_attention_max_distance", 128, 1, kMaxPositions));
    if (t.relativeMaxDistance <= t.relativeBuckets / 4)
        return f.fail("relative_attention_max_distance", "must exceed the exact buckets (relative_attention_num_buckets / 4 = " +
                                                             std::to_string(t.relativeBuckets / 4) + ")");
    ATTNSCOPE_TRY_ASSIGN(t.eosTokenId, f.integer("eos_token_id", 1, -1, kMaxVocab, true));
    ATTNSCOPE_TRY_ASSIGN(c.padTokenId, f.integer("pad_token_id", 0, -1, kMaxVocab, true));
    ATTNSCOPE_TRY_ASSIGN(c.layerNormEps, f.number("layer_norm_epsilon", 1e-6, 1e-30, 1.0));
    ATTNSCOPE_TRY_ASSIGN(c.moe.auxLossCoef, f.number("router_aux_loss_coef", 0.001, 0.0, 1e6));
    ATTNSCOPE_TRY_ASSIGN(c.moe.zLossCoef, f.number("router_z_loss_coef", 0.001, 0.0, 1e6));
    ATTNSCOPE_TRY_ASSIGN(c.activation, parseActivation(f, "dense_act_fn", "relu"));
    std::string projection;
    bool gated = false;
    ATTNSCOPE_TRY_ASSIGN(projection, f.text("feed_forward_proj", "relu"));
    ATTNSCOPE_TRY_ASSIGN(gated, f.flag("is_gated_act", false));
    if (gated || projection.rfind("gated", 0) == 0)
        return Error{ErrorCode::Unsupported, f.source() + ": a gated feed-forward ('" + projection +
                                                 "') is not part of the Switch Transformers layers; only wi -> act -> wo is read"};
    c.maxPositions = kMaxPositions;  // relative positions: no table bounds the text
    c.typeVocabSize = 0;
    c.causal = false;                // the encoder
    return {};
}

/// How far the training went, when recorded; a field of the wrong type is refused.
template <class Bad>
Result<void> readTrainingRecord(const Json& node, const Bad& bad, ModelConfig& c) {
    TrainingRecord record;
    bool any = false;
    const auto number = [&](const char* name, std::optional<double>& out) -> std::optional<Error> {
        const auto it = node.find(name);
        if (it == node.end()) return std::nullopt;
        if (!it->is_number() || !std::isfinite(it->get<double>())) return bad(std::string("'") + name + "' must be a finite number");
        out = it->get<double>();
        any = true;
        return std::nullopt;
    };
    for (const auto& [name, out] : {std::pair<const char*, std::optional<double>*>{"final_loss", &record.finalLoss},
                                    {"final_accuracy", &record.finalAccuracy},
                                    {"chance_accuracy", &record.chanceAccuracy}})
        if (auto error = number(name, *out)) return *error;
    if (const auto steps = node.find("steps"); steps != node.end()) {
        if (!steps->is_number_unsigned()) return bad("'steps' must be a non-negative integer");
        record.steps = steps->get<std::int64_t>();
        any = true;
    }
    if (const auto task = node.find("task"); task != node.end() && task->is_string()) record.task = task->get<std::string>();
    if (any) c.training = record;
    return {};
}

/// The attention a model of the built-in trainer was trained with: ids and parameter values are
/// strings here; the engine checks them against the variant's schema when the model is opened.
Result<void> readTrainedAttention(const Json& node, const std::string& source, ModelConfig& c) {
    const auto bad = [&](const std::string& rule) {
        return Error{ErrorCode::InvalidInput, source + ": field 'attnscope' " + rule};
    };
    if (!node.is_object()) return bad("must be an object");
    const auto variant = node.find("variant");
    if (variant == node.end() || !variant->is_string() || variant->get<std::string>().empty())
        return bad("needs a 'variant' string");
    c.attentionVariant = variant->get<std::string>();
    if (const auto params = node.find("params"); params != node.end()) {
        if (!params->is_object()) return bad("'params' must be an object of strings");
        for (const auto& [name, value] : params->items()) {
            if (!value.is_string()) return bad("'params." + name + "' must be a string");
            c.attentionParams[name] = value.get<std::string>();
        }
    }
    if (const auto seed = node.find("seed"); seed != node.end()) {
        if (!seed->is_number_unsigned()) return bad("'seed' must be a non-negative integer");
        c.attentionSeed = seed->get<std::uint64_t>();
    }
    return readTrainingRecord(node, bad, c);
}

}  // namespace

const char* modelArchName(ModelArch arch) {
    switch (arch) {
    case ModelArch::Bert: return "bert";
    case ModelArch::Roberta: return "roberta";
    case ModelArch::Gpt2: return "gpt2";
    case ModelArch::TransfoXl: return "transfo-xl";
    case ModelArch::SwitchTransformers: return "switch_transformers";
    case ModelArch::Llama: return "llama";
    case ModelArch::Vit: return "vit";
    }
    return "?";
}

Result<ModelConfig> parseModelConfig(const std::string& jsonText, const std::string& source) {
    auto parsed = parseStrictJson(jsonText, source);
    if (!parsed) return parsed.error();
    const Json& root = parsed.value();
    if (!root.is_object()) return Error{ErrorCode::InvalidInput, source + ": must be a JSON object"};
    FieldReader fields(root, source);

    ModelConfig config;
    ATTNSCOPE_TRY_ASSIGN(config.modelType, fields.text("model_type", ""));
    if (config.modelType == "bert") config.arch = ModelArch::Bert;
    else if (config.modelType == "roberta" || config.modelType == "roberta_switch") config.arch = ModelArch::Roberta;
    else if (config.modelType == "gpt2") config.arch = ModelArch::Gpt2;
    else if (config.modelType == "transfo-xl") config.arch = ModelArch::TransfoXl;
    else if (config.modelType == "switch_transformers") config.arch = ModelArch::SwitchTransformers;
    else if (isLlamaFamily(config.modelType))
        config.arch = ModelArch::Llama;
    else if (isVitFamily(config.modelType))
        config.arch = ModelArch::Vit;
    else if (config.modelType.empty())
        return Error{ErrorCode::Unsupported,
                     source + ": no model_type; supported architectures: bert, roberta, roberta_switch, gpt2, transfo-xl, "
                              "switch_transformers, llama, mistral, mixtral, qwen2, qwen3, qwen2_moe, olmoe, vit, deit"};
    else
        return Error{ErrorCode::Unsupported, source + ": model_type '" + config.modelType +
                                                 "' is not supported; supported architectures: bert, roberta, "
                                                 "roberta_switch, gpt2, transfo-xl, switch_transformers, llama, mistral, mixtral, qwen2, qwen3, "
                                                 "qwen2_moe, olmoe, vit, deit"};

    for (const auto& [key, value] : root.items()) {
        if (key == "auto_map" || key == "trust_remote_code" || (!key.empty() && key.front() == '_' && key != "_name_or_path"))
            config.notices.push_back(source + ": field '" + key + "' ignored (code references are never followed)");
    }
    auto status = config.arch == ModelArch::Gpt2        ? readGpt2(fields, config)
                  : config.arch == ModelArch::TransfoXl ? readTransfoXl(fields, root, config)
                  : config.arch == ModelArch::SwitchTransformers ? readSwitchTransformers(fields, config)
                  : config.arch == ModelArch::Llama              ? readLlamaConfig(fields, root, config)
                  : config.arch == ModelArch::Vit                ? readVitConfig(fields, root, config)
                                                        : readBertLike(fields, config);
    if (!status) return status.error();
    if (config.modelType == "roberta_switch" && !config.moe.active())
        return fields.fail("num_experts", "must be at least 1 for a roberta_switch model (its FFN layers are experts)");
    if (const auto it = root.find("attnscope"); it != root.end()) {
        auto trained = readTrainedAttention(*it, source, config);
        if (!trained) return trained.error();
    }
    const bool ownHeadDim = config.arch == ModelArch::TransfoXl || config.arch == ModelArch::SwitchTransformers ||
                            config.arch == ModelArch::Llama;
    if (!ownHeadDim && config.hiddenSize % config.numHeads != 0)
        return Error{ErrorCode::InvalidInput, source + ": hidden size " + std::to_string(config.hiddenSize) +
                                                  " is not a multiple of the head count " + std::to_string(config.numHeads)};
    return config;
}

std::vector<ExpectedTensor> expectedTensors(const ModelConfig& c) {
    const std::int64_t h = c.hiddenSize, inter = c.intermediateSize;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape) { out.push_back({std::move(name), std::move(shape)}); };
    auto addNorm = [&](const std::string& base) {
        add(base + ".weight", {h});
        add(base + ".bias", {h});
    };
    auto addLinear = [&](const std::string& base, std::int64_t rows, std::int64_t cols) {
        add(base + ".weight", {rows, cols});
        add(base + ".bias", {rows});
    };
    if (c.arch == ModelArch::TransfoXl) return expectedTransfoXlTensors(c);
    if (c.arch == ModelArch::SwitchTransformers) return expectedSwitchTransformersTensors(c);
    if (c.arch == ModelArch::Llama) return expectedLlamaTensors(c);
    if (c.arch == ModelArch::Vit) return expectedVitTensors(c);
    if (c.arch == ModelArch::Gpt2) {
        add("wte.weight", {c.vocabSize, h});
        add("wpe.weight", {c.maxPositions, h});
        for (std::int64_t l = 0; l < c.numLayers; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            addNorm(p + "ln_1");
            // Conv1D stores [in, out] (y = x W + b), transposed against nn.Linear.
            add(p + "attn.c_attn.weight", {h, 3 * h});
            add(p + "attn.c_attn.bias", {3 * h});
            add(p + "attn.c_proj.weight", {h, h});
            add(p + "attn.c_proj.bias", {h});
            addNorm(p + "ln_2");
            add(p + "mlp.c_fc.weight", {h, inter});
            add(p + "mlp.c_fc.bias", {inter});
            add(p + "mlp.c_proj.weight", {inter, h});
            add(p + "mlp.c_proj.bias", {h});
        }
        addNorm("ln_f");
        return out;
    }
    add("embeddings.word_embeddings.weight", {c.vocabSize, h});
    add("embeddings.position_embeddings.weight", {c.maxPositions, h});
    if (c.typeVocabSize > 0) add("embeddings.token_type_embeddings.weight", {c.typeVocabSize, h});
    addNorm("embeddings.LayerNorm");
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        addLinear(p + "attention.self.query", h, h);
        addLinear(p + "attention.self.key", h, h);
        addLinear(p + "attention.self.value", h, h);
        addLinear(p + "attention.output.dense", h, h);
        addNorm(p + "attention.output.LayerNorm");
        if (c.moe.active()) {
            add(switchRouterWeight(p), {c.moe.experts, h});
            for (std::int64_t e = 0; e < c.moe.experts; ++e) {
                const std::string expert = switchExpertPrefix(p, e);
                addLinear(expert + "intermediate.dense", inter, h);
                addLinear(expert + "output.dense", h, inter);
            }
        } else {
            addLinear(p + "intermediate.dense", inter, h);
            addLinear(p + "output.dense", h, inter);
        }
        addNorm(p + "output.LayerNorm");
    }
    return out;
}

}  // namespace attnscope::engine
