// `qwen2_moe`: Qwen2-MoE, Qwen2's decoder whose sparse layers ((l + 1) % decoder_sparse_step == 0,
// minus mlp_only_layers) route each token to its top num_experts_per_tok experts (mlp.experts.e.*),
// beside a shared expert gated by sigmoid(x · w); the other layers keep a dense MLP.

#include "families/llama/decoder.h"

namespace attnscope::engine::families::qwen2_moe {
namespace {

using namespace config_fields;

Result<void> readAttention(const FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    c.llama.qkvBias = true;  // as Qwen2: q, k, v with biases, o without
    c.llama.outputBias = false;
    // which of its layers slide changed between releases of the reference; not guessed
    bool use = false;
    ATTNSCOPE_TRY_ASSIGN(use, f.flag("use_sliding_window", false));
    if (use)
        return Error{ErrorCode::Unsupported, f.source() + ": field 'use_sliding_window' true is not computed for qwen2_moe "
                                                          "(which layers slide differs between releases of its reference)"};
    return {};
}

// Which layers are sparse: every decoder_sparse_step-th, minus those mlp_only_layers lists.
Result<void> readSparseLayers(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    std::int64_t step = 1;
    ATTNSCOPE_TRY_ASSIGN(step, f.integer("decoder_sparse_step", 1, 1, kMaxLayers));
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

Result<void> readExperts(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    if (auto common = readExpertFields(f, c, ExpertFields{}); !common) return common;
    ATTNSCOPE_TRY_ASSIGN(c.llama.expertInner, f.integer("moe_intermediate_size", 1408, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.llama.sharedExpertInner, f.integer("shared_expert_intermediate_size", 5632, 0, kMaxIntermediate));
    return readSparseLayers(f, root, c);
}

Result<void> readConfig(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.vocab = 151936;
    traits.hidden = 2048;
    traits.intermediate = 5632;
    traits.layers = 24;
    traits.heads = 16;
    traits.maxPositions = 32768;
    traits.readAttention = &readAttention;
    traits.readExperts = &readExperts;
    return readDecoderConfig(f, root, c, traits);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "qwen2_moe";
    e.name = "Qwen2-MoE";
    e.reference = "transformers' Qwen2MoeModel (modeling_qwen2_moe.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOnly;
    return e;
}

}  // namespace attnscope::engine::families::qwen2_moe
