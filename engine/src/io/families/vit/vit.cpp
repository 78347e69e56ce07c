// `vit` (ViT, DINO) and `deit` (DeiT): Vision Transformers (Dosovitskiy et al. 2021; Touvron et al.
// 2021) as Hugging Face's ViTModel and DeiTModel compute and name them: config.json's fields
// (ViTConfig / DeiTConfig names and defaults), the encoder's tensors, and its layers' attention.

#include "io/families/family.h"
#include "io/families/softmax_layer.h"
#include "io/families/vit/vit_tensors.h"

namespace attnscope::engine {

using namespace config_fields;

namespace {

// image_size / patch_size: an integer, or [height, width] with both equal (a square grid).
Result<std::int64_t> squareSide(const FieldReader& f, const nlohmann::json& root, const char* key, std::int64_t fallback) {
    const auto it = root.find(key);
    if (it != root.end() && it->is_array()) {
        if (it->size() != 2 || !(*it)[0].is_number_integer() || (*it)[0] != (*it)[1])
            return f.fail(key, "must be an integer or [side, side] (square pictures only), got " + it->dump());
        const std::int64_t side = (*it)[0].get<std::int64_t>();
        if (side < 1 || side > 16384) return f.fail(key, "must be in [1, 16384], got " + it->dump());
        return side;
    }
    return f.integer(key, fallback, 1, 16384);
}

// Refuses, naming the field, a patch size that does not divide the image size and channels other than 3.
Result<void> readVitConfig(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    ATTNSCOPE_TRY_ASSIGN(c.hiddenSize, f.integer("hidden_size", 768, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(c.numLayers, f.integer("num_hidden_layers", 12, 1, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(c.numHeads, f.integer("num_attention_heads", 12, 1, kMaxHeads));
    ATTNSCOPE_TRY_ASSIGN(c.intermediateSize, f.integer("intermediate_size", 3072, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.layerNormEps, f.number("layer_norm_eps", 1e-12, 1e-30, 1.0));
    ATTNSCOPE_TRY_ASSIGN(c.activation, parseActivation(f, "hidden_act", "gelu"));
    ATTNSCOPE_TRY_ASSIGN(c.vit.imageSize, squareSide(f, root, "image_size", 224));
    ATTNSCOPE_TRY_ASSIGN(c.vit.patchSize, squareSide(f, root, "patch_size", 16));
    ATTNSCOPE_TRY_ASSIGN(c.vit.qkvBias, f.flag("qkv_bias", true));
    std::int64_t channels = 3;
    ATTNSCOPE_TRY_ASSIGN(channels, f.integer("num_channels", 3, 1, 64));
    if (channels != 3) return f.fail("num_channels", "must be 3 (RGB pictures), got " + std::to_string(channels));
    if (c.vit.imageSize % c.vit.patchSize != 0)
        return f.fail("patch_size", std::to_string(c.vit.patchSize) + " does not divide image_size " + std::to_string(c.vit.imageSize));
    c.vit.distillationToken = c.modelType == "deit";
    if (c.hiddenSize % c.numHeads != 0)
        return Error{ErrorCode::InvalidInput, f.source() + ": hidden size " + std::to_string(c.hiddenSize) +
                                                  " is not a multiple of the head count " + std::to_string(c.numHeads)};
    c.headSize = c.hiddenSize / c.numHeads;
    c.kvHeads = c.numHeads;
    c.vocabSize = 0;  // pixels, not ids
    c.typeVocabSize = 0;
    c.maxPositions = c.vit.prefixTokens() + c.vit.gridSide() * c.vit.gridSide();
    return {};
}

// A ViT trained without a class token (timm's class_token=False): patches only.
void adaptToFile(ModelConfig& c, const std::function<bool(const std::string&)>& has, std::vector<std::string>& warnings) {
    if (has(vitClsToken())) return;
    c.vit.clsToken = false;
    c.maxPositions = c.vit.prefixTokens() + c.vit.gridSide() * c.vit.gridSide();
    warnings.push_back(std::string("no ") + vitClsToken() + ": the model reads patches only, without a [CLS] token");
}

LayerAttention ownAttention(const ModelConfig&, std::int64_t) {
    SoftmaxLayerTerms terms;
    terms.positions = "learnt absolute positions over the patch grid";
    return softmaxLayer(terms);
}

}  // namespace

std::string vitLayerPrefix(std::int64_t layer) { return "encoder.layer." + std::to_string(layer) + "."; }

std::vector<ExpectedTensor> expectedVitTensors(const ModelConfig& c) {
    const std::int64_t h = c.hiddenSize, inter = c.intermediateSize, p = c.vit.patchSize;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape) { out.push_back({std::move(name), std::move(shape)}); };
    auto addLinear = [&](const std::string& base, std::int64_t rows, std::int64_t cols, bool bias = true) {
        add(base + ".weight", {rows, cols});
        if (bias) add(base + ".bias", {rows});
    };
    add(vitPatchProjectionWeight(), {h, 3, p, p});  // first: the checkpoint finds the prefix by it
    add("embeddings.patch_embeddings.projection.bias", {h});
    if (c.vit.clsToken) add(vitClsToken(), {1, 1, h});
    if (c.vit.distillationToken) add("embeddings.distillation_token", {1, 1, h});
    add("embeddings.position_embeddings", {1, c.maxPositions, h});
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        const std::string layer = vitLayerPrefix(l);
        for (const char* norm : {"layernorm_before", "layernorm_after"}) {
            add(layer + norm + ".weight", {h});
            add(layer + norm + ".bias", {h});
        }
        for (const char* proj : {"query", "key", "value"})
            addLinear(layer + "attention.attention." + proj, h, h, c.vit.qkvBias);
        addLinear(layer + "attention.output.dense", h, h);
        addLinear(layer + "intermediate.dense", inter, h);
        addLinear(layer + "output.dense", h, inter);
    }
    return out;
}

namespace families::vit {

FamilyEntry entry() {
    FamilyEntry e;
    e.id = "vit";
    e.alsoReads = {"deit"};
    e.name = "Vision Transformer (ViT, DeiT, DINO)";
    e.reference = "transformers' ViTModel (modeling_vit.py) and DeiTModel (modeling_deit.py)";
    e.readConfig = &readVitConfig;
    e.tensors = &expectedVitTensors;
    e.adaptToFile = &adaptToFile;
    e.prefixes = {"vit.", "deit.", ""};
    e.layerStem = "encoder.layer.";
    e.tokenizer = TokenizerFiles::None;
    e.ownAttention = &ownAttention;
    e.takesTrainedVariant = true;
    e.vision = true;
    return e;
}

}  // namespace families::vit
}  // namespace attnscope::engine
