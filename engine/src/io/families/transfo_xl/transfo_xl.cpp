// `transfo-xl`: Transformer-XL (Dai et al. 2019; the reference MemTransformerLM with
// RelPartialLearnableMultiHeadAttn, attn_type 0) as Hugging Face's TransfoXL names it; also the
// project's trainer folders. Its layers' own attention is the `transformer_xl` variant with the
// model's segment and memory lengths and its u, v and projected relative encodings.

#include "io/families/transfo_xl/transfo_xl.h"
#include "io/families/family.h"
#include "io/families/transfo_xl/transfo_xl_tensors.h"

namespace attnscope::engine::families::transfo_xl {
namespace {

using namespace config_fields;
using Json = nlohmann::json;

// Only the case without adaptive embeddings is read (div_val 1, no cutoffs, d_embed = d_model),
// with the default attention.
Result<void> readConfig(const FieldReader& f, const Json& root, ModelConfig& c) {
    TransfoXlSettings& x = c.transfoXl;
    ATTNSCOPE_TRY_ASSIGN(c.vocabSize, f.integer("vocab_size", 256, 1, kMaxVocab));
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("d_model", 1024, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("n_head", 16, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(c.headSize, f.integer("d_head", 64, 1, kMaxHidden));
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
    c.kvHeads = c.numHeads;
    c.maxPositions = kMaxPositions;  // read in segments: no position table bounds the text
    c.typeVocabSize = 0;
    c.activation = Activation::Relu;
    c.causal = true;
    return {};
}

ParamValues memoryParams(const ModelConfig& c) {
    return ParamValues{{"segment", c.transfoXl.tgtLen},
                       {"memory", c.transfoXl.memLen},
                       {"relative", true},
                       {"same_length", c.transfoXl.sameLength}};
}

LayerAttention ownAttention(const ModelConfig& c, std::int64_t) {
    LayerAttention a;
    a.variant = "transformer_xl";
    a.params = memoryParams(c);
    a.summary = "segments of " + std::to_string(c.transfoXl.tgtLen) + " tokens, each seeing a memory of the " +
                std::to_string(c.transfoXl.memLen) + " before it, causally, with relative positions (the four score terms)" +
                (c.transfoXl.sameLength ? ", every query the same number of keys (same_length)" : "");
    return a;
}

std::map<std::string, ParamValues> variantDefaults(const ModelConfig& c) { return {{"transformer_xl", memoryParams(c)}}; }

// The scores are made a segment at a time: L queries against their memory and themselves.
std::int64_t segmentRows(const ModelConfig& c, std::int64_t n) { return std::min(n, c.transfoXl.tgtLen); }
std::int64_t segmentKeys(const ModelConfig& c, std::int64_t n) { return segmentRows(c, n) + c.transfoXl.memLen; }
// the projected relative encodings, kept per layer as the own attention's input
std::int64_t relativeKeys(const ModelConfig& c, std::int64_t n) { return c.numHeads * segmentKeys(c, n) * c.headSize; }

}  // namespace

FamilyEntry entry() {
    FamilyEntry e;
    e.id = kModelType;
    e.name = "Transformer-XL";
    e.reference = "transformers' TransfoXLModel (modeling_transfo_xl.py), kimiyoung/transformer-xl's MemTransformerLM";
    e.readConfig = &readConfig;
    e.tensors = &expectedTransfoXlTensors;
    e.prefixes = {"transformer.", ""};
    e.layerStem = "layers.";
    e.tokenizer = TokenizerFiles::JsonOrBytes;
    e.ownAttention = &ownAttention;
    e.variantDefaults = &variantDefaults;
    e.scoreCopies = 4;  // content, position, shifted position, softmax
    e.scoreRows = &segmentRows;
    e.scoreKeys = &segmentKeys;
    e.keptPerLayer = &relativeKeys;
    return e;
}

}  // namespace attnscope::engine::families::transfo_xl
