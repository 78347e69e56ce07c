// `switch_transformers`: the encoder of a Switch Transformers checkpoint (Fedus et al. 2021; Hugging
// Face's SwitchTransformersEncoderModel): the T5 block with Switch FFN layers. Its attention is
// unscaled q·k plus T5's bucketed relative position bias, learnt in block 0 and added in every block.

#include "io/families/family.h"
#include "io/families/softmax_layer.h"
#include "io/families/switch_transformers/switch_transformers_tensors.h"

namespace attnscope::engine::families::switch_transformers {
namespace {

using namespace config_fields;

// Hugging Face's SwitchTransformersConfig names and defaults. HF derives encoder_sparse_step from
// num_sparse_encoder_layers unless the file holds the step itself, which then wins; a gated FFN
// (v1.1's "gated-gelu") has no HF Switch layer.
Result<void> readConfig(const FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    T5Settings& t = c.t5;
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", 32128, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("d_model", 768, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.headSize, f.integer("d_kv", 64, 1, kMaxHidden));
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
    ATTNSCOPE_TRY_ASSIGN(c.eosTokenId, f.integer("eos_token_id", 1, -1, kMaxVocab, true));
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
    // block l is sparse when step == 1 or l % step == 1
    c.sparseLayers.assign(static_cast<std::size_t>(c.numLayers), 0);
    for (std::int64_t l = 0; l < c.numLayers; ++l)
        c.sparseLayers[static_cast<std::size_t>(l)] = t.sparseStep > 0 && (t.sparseStep == 1 || l % t.sparseStep == 1) ? 1 : 0;
    c.kvHeads = c.numHeads;
    c.maxPositions = kMaxPositions;  // relative positions: no table bounds the text
    c.typeVocabSize = 0;
    c.causal = false;                // the encoder
    return {};
}

// The capture's Q carries sqrt(d_kv) (so that a variant on it sees the content scores q·k, which
// T5 leaves unscaled): the default scale 1/sqrt(d) takes it off again.
LayerAttention ownAttention(const ModelConfig& c, std::int64_t) {
    SoftmaxLayerTerms terms;
    terms.bias = "T5's relative position bias over " + std::to_string(c.t5.relativeBuckets) + " buckets (learnt in block 0, "
                 "added in every block)";
    terms.positions = "unscaled q·k";
    return softmaxLayer(terms);
}

std::vector<std::string> openNotices(const ModelConfig&) {
    return {"a T5 encoder: a variant run on a layer sees its content scores q·k (its Q comes scaled by sqrt(d_kv), as T5 "
            "does not divide by it) without the relative position bias; the model's own attention has both"};
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e;
    e.id = "switch_transformers";
    e.name = "Switch Transformers (T5 encoder)";
    e.reference = "transformers' SwitchTransformersEncoderModel (modeling_switch_transformers.py)";
    e.readConfig = &readConfig;
    e.tensors = &expectedSwitchTransformersTensors;
    e.prefixes = {""};
    e.alternativeNames = {{kSwitchTransformersEmbedding, kSwitchTransformersEncoderEmbedding}};
    e.layerStem = "encoder.block.";
    e.expertLayersFrom = [](const ModelConfig& c) { return "encoder_sparse_step " + std::to_string(c.t5.sparseStep); };
    e.tokenizer = TokenizerFiles::T5SentencePiece;
    e.tokenizerAlso = {"t5"};
    e.ownAttention = &ownAttention;
    e.openNotices = &openNotices;
    e.scoreCopies = 3;  // scores, bias, softmax
    return e;
}

}  // namespace attnscope::engine::families::switch_transformers
