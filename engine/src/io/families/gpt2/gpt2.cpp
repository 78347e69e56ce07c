// `gpt2`: GPT-2 (Radford et al. 2019) as Hugging Face's GPT2Model computes and names it.

#include "io/families/family.h"
#include "io/families/softmax_layer.h"

namespace attnscope::engine::families::gpt2 {
namespace {

using namespace config_fields;

Result<void> readConfig(const FieldReader& f, const nlohmann::json&, ModelConfig& c) {
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
    if (c.hiddenSize % c.numHeads != 0)
        return Error{ErrorCode::InvalidInput, f.source() + ": hidden size " + std::to_string(c.hiddenSize) +
                                                  " is not a multiple of the head count " + std::to_string(c.numHeads)};
    c.headSize = c.hiddenSize / c.numHeads;
    c.kvHeads = c.numHeads;
    c.typeVocabSize = 0;
    c.causal = true;
    return {};
}

std::vector<ExpectedTensor> tensors(const ModelConfig& c) {
    const std::int64_t h = c.hiddenSize, inter = c.intermediateSize;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape) { out.push_back({std::move(name), std::move(shape)}); };
    auto addNorm = [&](const std::string& base) {
        add(base + ".weight", {h});
        add(base + ".bias", {h});
    };
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

LayerAttention ownAttention(const ModelConfig&, std::int64_t) {
    SoftmaxLayerTerms terms;
    terms.causal = true;
    terms.positions = "learnt absolute positions";
    return softmaxLayer(terms);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e;
    e.id = "gpt2";
    e.name = "GPT-2";
    e.reference = "transformers' GPT2Model (modeling_gpt2.py)";
    e.readConfig = &readConfig;
    e.tensors = &tensors;
    e.prefixes = {"", "transformer."};
    e.layerStem = "h.";
    e.tokenizer = TokenizerFiles::Gpt2Bpe;
    e.ownAttention = &ownAttention;
    e.takesTrainedVariant = true;
    return e;
}

}  // namespace attnscope::engine::families::gpt2
