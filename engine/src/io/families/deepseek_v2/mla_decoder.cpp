#include "io/families/deepseek_v2/mla_decoder.h"

#include "io/families/llama/decoder.h"
#include "io/families/softmax_layer.h"

#include <cmath>

namespace attnscope::engine {

using namespace config_fields;

namespace {

// YaRN's m(s, k) = 0.1 · k · ln s + 1 (1 for s ≤ 1), as DeepSeek's yarn_get_mscale.
double yarnMscale(double scale, double k) { return scale <= 1 ? 1.0 : 0.1 * k * std::log(scale) + 1.0; }

Result<void> readLatent(const FieldReader& f, const Json& root, ModelConfig& c, const MlaTraits& t) {
    DeepseekSettings& d = c.deepseek;
    // null: no low-rank queries (one q_proj, as V2-Lite); absent: the config class's rank
    const auto q = root.find("q_lora_rank");
    d.qLoraRank = 0;
    if (q == root.end() || !q->is_null()) ATTNSCOPE_TRY_ASSIGN(d.qLoraRank, f.integer("q_lora_rank", t.qLoraRank, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(d.kvLoraRank, f.integer("kv_lora_rank", 512, 1, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(d.qkNopeDim, f.integer("qk_nope_head_dim", 128, 0, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(d.qkRopeDim, f.integer("qk_rope_head_dim", 64, 2, kMaxHidden));
    ATTNSCOPE_TRY_ASSIGN(d.vHeadDim, f.integer("v_head_dim", 128, 1, kMaxHidden));
    if (d.qkRopeDim % 2 != 0) return f.fail("qk_rope_head_dim", "must be even (rotary positions turn pairs of features)");
    d.ropeInterleave = true;
    if (t.v3) ATTNSCOPE_TRY_ASSIGN(d.ropeInterleave, f.flag("rope_interleave", true));
    c.headSize = d.qkNopeDim + d.qkRopeDim;
    if (d.vHeadDim > c.headSize)
        return f.fail("v_head_dim", "must not exceed qk_nope_head_dim + qk_rope_head_dim (" + std::to_string(c.headSize) + ")");
    return {};
}

// The experts: n_routed_experts behind a router (V2: softmax, greedy or group_limited_greedy with
// groups scored by their best; V3: sigmoid plus e_score_correction_bias, groups by their two best),
// n_shared_experts always, dense layers before first_k_dense_replace and off moe_layer_freq.
Result<void> readExperts(const FieldReader& f, ModelConfig& c, const MlaTraits& t) {
    DeepseekSettings& d = c.deepseek;
    SwitchSettings& m = c.moe;
    ATTNSCOPE_TRY_ASSIGN(m.experts, f.integer("n_routed_experts", t.v3 ? 256 : 0, 0, 4096, true));
    if (m.experts == 0) return {};
    ATTNSCOPE_TRY_ASSIGN(m.topK, f.integer("num_experts_per_tok", t.v3 ? 8 : 1, 1, m.experts, true));
    ATTNSCOPE_TRY_ASSIGN(m.gateScale, f.number("routed_scaling_factor", t.v3 ? 2.5 : 1.0, 1e-9, 1e9));
    ATTNSCOPE_TRY_ASSIGN(m.normalizeTopK, f.flag("norm_topk_prob", t.v3));
    if (!t.v3 && m.normalizeTopK)  // (DeepSeek's code renormalises; transformers' port never does)
        return f.fail("norm_topk_prob", "true is not computed for deepseek_v2 (its references disagree)");
    std::string method;
    ATTNSCOPE_TRY_ASSIGN(method, f.text("topk_method", t.v3 ? "noaux_tc" : "greedy"));
    std::string scoring;
    ATTNSCOPE_TRY_ASSIGN(scoring, f.text("scoring_func", t.v3 ? "sigmoid" : "softmax"));
    if (scoring != (t.v3 ? "sigmoid" : "softmax")) return f.fail("scoring_func", std::string("must be ") + (t.v3 ? "sigmoid" : "softmax"));
    m.scoring = scoring;
    if (t.v3 && method != "noaux_tc") return f.fail("topk_method", "must be noaux_tc for deepseek_v3");
    if (!t.v3 && method != "greedy" && method != "group_limited_greedy")
        return f.fail("topk_method", "must be greedy or group_limited_greedy, got '" + method + "'");
    m.expertGroups = m.keptGroups = 1;
    if (method != "greedy") {
        ATTNSCOPE_TRY_ASSIGN(m.expertGroups, f.integer("n_group", t.v3 ? 8 : 1, 1, m.experts, true));
        ATTNSCOPE_TRY_ASSIGN(m.keptGroups, f.integer("topk_group", t.v3 ? 4 : 1, 1, m.expertGroups, true));
        if (m.experts % m.expertGroups != 0)
            return f.fail("n_group", "must divide n_routed_experts (" + std::to_string(m.experts) + ")");
    }
    m.groupScore = t.v3 ? "top2" : "max";
    d.choiceBias = t.v3;
    m.capacityFactor = 0;  // dropless
    m.zLossCoef = 0;
    ATTNSCOPE_TRY_ASSIGN(c.llama.expertInner, f.integer("moe_intermediate_size", t.moeIntermediate, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(d.sharedExperts, f.integer("n_shared_experts", t.v3 ? 1 : 0, 0, 4096, true));
    ATTNSCOPE_TRY_ASSIGN(d.firstDenseLayers, f.integer("first_k_dense_replace", t.v3 ? 3 : 0, 0, kMaxLayers));
    ATTNSCOPE_TRY_ASSIGN(d.moeLayerFreq, f.integer("moe_layer_freq", 1, 1, kMaxLayers));
    c.sparseLayers.assign(static_cast<std::size_t>(c.numLayers), 0);
    for (std::int64_t l = d.firstDenseLayers; l < c.numLayers; ++l)
        c.sparseLayers[static_cast<std::size_t>(l)] = l % d.moeLayerFreq == 0 ? 1 : 0;
    return {};
}

}  // namespace

Result<void> readMlaConfig(const FieldReader& f, const Json& root, ModelConfig& c, const MlaTraits& t) {
    DecoderTraits traits;
    traits.vocab = t.vocab;
    traits.hidden = t.hidden;
    traits.intermediate = t.intermediate;
    traits.layers = t.layers;
    traits.heads = t.heads;
    traits.maxPositions = t.maxPositions;
    traits.readsHeadDim = false;  // the widths are MLA's own fields
    traits.bos = 0;
    if (auto read = readDecoderConfig(f, root, c, traits); !read) return read;
    if (auto latent = readLatent(f, root, c, t); !latent) return latent;
    c.kvHeads = c.numHeads;  // every head its own keys (the rotary part shared, as a value)
    // yarn's dims are the rotary ones; the softmax's scale takes mscale(factor, mscale_all_dim)²
    DeepseekSettings& d = c.deepseek;
    const RopeSettings& rope = c.llama.rope;
    const double m = rope.scaling == "yarn" && rope.mscaleAllDim > 0 ? yarnMscale(rope.factor, rope.mscaleAllDim) : 1.0;
    d.scoreScale = m * m / std::sqrt(static_cast<double>(c.headSize));
    return readExperts(f, c, t);
}

std::vector<ExpectedTensor> mlaTensors(const ModelConfig& c) {
    const DeepseekSettings& d = c.deepseek;
    const std::int64_t h = c.hiddenSize, heads = c.numHeads, qk = c.headSize;
    const bool bias = c.llama.qkvBias;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape) { out.push_back({std::move(name), std::move(shape)}); };
    auto swiglu = [&](const std::string& p, std::int64_t width) {
        add(p + "gate_proj.weight", {width, h});
        add(p + "up_proj.weight", {width, h});
        add(p + "down_proj.weight", {h, width});
    };
    add("embed_tokens.weight", {c.vocabSize, h});
    for (std::int64_t layer = 0; layer < c.numLayers; ++layer) {
        const std::string p = decoderLayerPrefix(layer), a = p + "self_attn.";
        add(p + "input_layernorm.weight", {h});
        if (d.qLoraRank > 0) {
            add(a + "q_a_proj.weight", {d.qLoraRank, h});
            if (bias) add(a + "q_a_proj.bias", {d.qLoraRank});
            add(a + "q_a_layernorm.weight", {d.qLoraRank});
            add(a + "q_b_proj.weight", {heads * qk, d.qLoraRank});
        } else {
            add(a + "q_proj.weight", {heads * qk, h});
        }
        add(a + "kv_a_proj_with_mqa.weight", {d.kvLoraRank + d.qkRopeDim, h});
        if (bias) add(a + "kv_a_proj_with_mqa.bias", {d.kvLoraRank + d.qkRopeDim});
        add(a + "kv_a_layernorm.weight", {d.kvLoraRank});
        add(a + "kv_b_proj.weight", {heads * (d.qkNopeDim + d.vHeadDim), d.kvLoraRank});
        add(a + "o_proj.weight", {h, heads * d.vHeadDim});
        if (bias) add(a + "o_proj.bias", {h});
        add(p + "post_attention_layernorm.weight", {h});
        if (!c.switchLayer(layer)) {
            swiglu(p + "mlp.", c.intermediateSize);
            continue;
        }
        add(p + "mlp.gate.weight", {c.moe.experts, h});
        if (d.choiceBias) add(p + "mlp.gate.e_score_correction_bias", {c.moe.experts});
        for (std::int64_t e = 0; e < c.moe.experts; ++e) swiglu(p + "mlp.experts." + std::to_string(e) + ".", c.llama.expertInner);
        if (d.sharedExperts > 0) swiglu(p + "mlp.shared_experts.", c.llama.expertInner * d.sharedExperts);
    }
    add("norm.weight", {h});
    return out;
}

LayerAttention mlaAttention(const ModelConfig& c, std::int64_t) {
    const DeepseekSettings& d = c.deepseek;
    SoftmaxLayerTerms terms;
    terms.causal = true;
    terms.scale = d.scoreScale;
    terms.positions = "multi-head latent attention: keys and values from a " + std::to_string(d.kvLoraRank) +
                      "-wide latent, rotary positions on " + std::to_string(d.qkRopeDim) + " of the " +
                      std::to_string(c.headSize) + " query/key features (the rotary key shared by every head)";
    return softmaxLayer(terms);
}

FamilyEntry mlaEntry() {
    FamilyEntry e;
    e.latentShape = [](const ModelConfig& c) {
        return LatentAttentionShape{c.deepseek.qkNopeDim, c.deepseek.qkRopeDim, c.deepseek.kvLoraRank};
    };
    e.tensors = &mlaTensors;
    e.prefixes = {"model.", ""};
    e.layerStem = "layers.";
    e.expertLayersFrom = [](const ModelConfig&) { return std::string("first_k_dense_replace, moe_layer_freq"); };
    e.ownAttention = &mlaAttention;
    e.layerByLayer = true;
    e.tokenizer = TokenizerFiles::JsonOnly;
    return e;
}

}  // namespace attnscope::engine
