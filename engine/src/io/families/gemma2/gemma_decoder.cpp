#include "io/families/gemma2/gemma_decoder.h"

#include "io/families/llama/decoder.h"
#include "io/families/softmax_layer.h"

#include <algorithm>
#include <cmath>

namespace attnscope::engine {

using namespace config_fields;

namespace {

// The attention's own fields, read after the decoder's common ones (the readAttention hook):
// biases, scale, soft-caps, window and its layers, q/k norms, the local rotary base.
Result<void> readGemmaAttention(const FieldReader& f, const Json& root, ModelConfig& c, const GemmaTraits& t) {
    GemmaSettings& g = c.gemma;  // (attention_bias: read by the decoder's reader)
    ATTNSCOPE_TRY_ASSIGN(g.queryPreAttnScalar, f.number("query_pre_attn_scalar", 256.0, 1e-6, 1e9));
    // null switches a cap off; absent keeps the config class's default
    ATTNSCOPE_TRY_ASSIGN(g.attnSoftcap, f.number("attn_logit_softcapping", root.contains("attn_logit_softcapping") ? 0.0 : t.attnSoftcap,
                                                 0.0, 1e6, true));
    ATTNSCOPE_TRY_ASSIGN(g.finalSoftcap, f.number("final_logit_softcapping", root.contains("final_logit_softcapping") ? 0.0 : t.finalSoftcap,
                                                  0.0, 1e6, true));
    ATTNSCOPE_TRY_ASSIGN(c.llama.slidingWindow, f.integer("sliding_window", 4096, 0, kMaxPositions, true));
    std::int64_t pattern = t.slidingPattern;
    if (t.slidingPattern != 2) ATTNSCOPE_TRY_ASSIGN(pattern, f.integer("sliding_window_pattern", t.slidingPattern, 1, kMaxLayers, true));
    c.llama.slidingLayers = alternatingSlidingLayers(c.numLayers, pattern);
    if (auto types = readLayerTypes(f, root, c.numLayers, c.llama.slidingLayers); !types) return types;
    if (t.qkNorm) c.llama.qkNorm = QkNorm::PerHead;
    g.localRopeOwn = t.localRope;
    if (t.localRope) ATTNSCOPE_TRY_ASSIGN(g.localRope.theta, f.number("rope_local_base_freq", 10000.0, 1.0, 1e12));
    return {};
}

}  // namespace

Result<void> readGemmaConfig(const FieldReader& f, const Json& root, ModelConfig& c, const GemmaTraits& t) {
    DecoderTraits traits;
    traits.vocab = t.vocab;
    traits.hidden = 2304;
    traits.intermediate = 9216;
    traits.layers = 26;
    traits.heads = 8;
    traits.headDim = 256;
    traits.maxPositions = t.maxPositions;
    traits.theta = t.theta;
    traits.bos = 2;
    traits.activationKey = "hidden_activation";
    traits.activation = "gelu_pytorch_tanh";
    traits.gelu = true;
    if (auto read = readDecoderConfig(f, root, c, traits); !read) return read;
    // (the decoder's hook has no traits of its own: the attention's fields are read here, after it)
    return readGemmaAttention(f, root, c, t);
}

std::vector<ExpectedTensor> gemmaTensors(const ModelConfig& c) {
    std::vector<ExpectedTensor> out = decoderTensors(c);
    for (std::int64_t layer = 0; layer < c.numLayers; ++layer) {
        const std::string p = decoderLayerPrefix(layer);
        out.push_back({p + "pre_feedforward_layernorm.weight", {c.hiddenSize}});
        out.push_back({p + "post_feedforward_layernorm.weight", {c.hiddenSize}});
    }
    return out;
}

LayerAttention gemmaAttention(const ModelConfig& c, std::int64_t layer) {
    SoftmaxLayerTerms terms;
    terms.causal = true;
    const bool slides = c.llama.slides(layer);
    if (slides) terms.window = c.llama.slidingWindow;
    terms.scale = 1.0 / std::sqrt(c.gemma.queryPreAttnScalar);
    terms.softcap = c.gemma.attnSoftcap;
    terms.positions = std::string(slides ? "local" : "global") + " layer, rotary positions of base " +
                      formatParamValue(gemmaRope(c, layer)->theta);
    if (c.kvHeads < c.numHeads)
        terms.positions += ", " + std::to_string(c.numHeads / c.kvHeads) + " query heads per key/value head";
    return softmaxLayer(terms);
}

const RopeSettings* gemmaRope(const ModelConfig& c, std::int64_t layer) {
    return c.gemma.localRopeOwn && c.llama.slides(layer) ? &c.gemma.localRope : &c.llama.rope;
}

// What llama.cpp fixes for Gemma: GeGLU with tanh GeLU, and queries scaled by head_dim^−½ — by
// (hidden / heads)^−½ for the 27B models (46 layers in Gemma 2, 62 in Gemma 3), their
// query_pre_attn_scalar.
static void completeGgufConfig(nlohmann::json& config, const std::function<bool(const std::string&)>&) {
    config["hidden_activation"] = "gelu_pytorch_tanh";
    const std::int64_t layers = config.value("num_hidden_layers", std::int64_t{0});
    const std::int64_t heads = std::max<std::int64_t>(1, config.value("num_attention_heads", std::int64_t{1}));
    const std::int64_t hidden = config.value("hidden_size", std::int64_t{0});
    const bool large = layers == 46 || layers == 62;
    config["query_pre_attn_scalar"] = large ? hidden / heads : config.value("head_dim", hidden / heads);
    if (!config.contains("attn_logit_softcapping")) config["attn_logit_softcapping"] = nullptr;
}

FamilyEntry gemmaEntry() {
    FamilyEntry e = decoderEntry();
    e.tensors = &gemmaTensors;
    // Gemma 3's multimodal files keep the text tower under language_model.model. (older) or
    // model.language_model.
    e.prefixes = {"model.", "", "language_model.model.", "model.language_model."};
    e.expertLayersFrom = nullptr;
    e.ownAttention = &gemmaAttention;
    e.rope = &gemmaRope;
    e.tokenizer = TokenizerFiles::JsonOrSentencePiece;
    e.gguf.normAddend = -1.0f;  // llama.cpp's converter stores Gemma's norms as 1 + w
    e.gguf.completeConfig = &completeGgufConfig;
    return e;
}

}  // namespace attnscope::engine
