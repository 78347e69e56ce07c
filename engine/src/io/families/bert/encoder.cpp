#include "io/families/bert/encoder.h"

#include "io/families/softmax_layer.h"

namespace attnscope::engine {

using namespace config_fields;

Result<void> readEncoderConfig(const FieldReader& f, ModelConfig& c, const EncoderDefaults& d) {
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", d.vocab, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("hidden_size", 768, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("num_hidden_layers", 12, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("num_attention_heads", 12, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(c.intermediateSize, f.integer("intermediate_size", 3072, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.maxPositions, f.integer("max_position_embeddings", d.maxPositions, 1, kMaxPositions));
    ATTNSCOPE_TRY_ASSIGN(c.typeVocabSize, f.integer("type_vocab_size", d.typeVocab, 0, kMaxTypeVocab));
    ATTNSCOPE_TRY_ASSIGN(c.layerNormEps, f.number("layer_norm_eps", d.layerNormEps, 1e-30, 1.0));
    ATTNSCOPE_TRY_ASSIGN(c.padTokenId, f.integer("pad_token_id", d.padTokenId, -1, kMaxVocab, true));
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
    if (c.hiddenSize % c.numHeads != 0)
        return Error{ErrorCode::InvalidInput, f.source() + ": hidden size " + std::to_string(c.hiddenSize) +
                                                  " is not a multiple of the head count " + std::to_string(c.numHeads)};
    c.headSize = c.hiddenSize / c.numHeads;
    c.kvHeads = c.numHeads;
    return {};
}

std::vector<ExpectedTensor> encoderTensors(const ModelConfig& c) {
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

LayerAttention encoderAttention(const ModelConfig& c, std::int64_t) {
    SoftmaxLayerTerms terms;
    terms.causal = c.causal;
    terms.positions = "learnt absolute positions";
    return softmaxLayer(terms);
}

}  // namespace attnscope::engine
