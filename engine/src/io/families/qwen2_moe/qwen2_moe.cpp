// `qwen2_moe`: Qwen2-MoE, Qwen2's decoder whose sparse layers ((l + 1) % decoder_sparse_step == 0,
// minus mlp_only_layers) route each token to its top num_experts_per_tok experts (mlp.experts.e.*),
// beside a shared expert gated by sigmoid(x · w); the other layers keep a dense MLP.

#include "io/families/llama/decoder.h"

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

Result<void> readExperts(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    if (auto common = readExpertFields(f, c, ExpertFields{}); !common) return common;
    ATTNSCOPE_TRY_ASSIGN(c.llama.expertInner, f.integer("moe_intermediate_size", 1408, 1, kMaxIntermediate));
    ATTNSCOPE_TRY_ASSIGN(c.llama.sharedExpertInner, f.integer("shared_expert_intermediate_size", 5632, 0, kMaxIntermediate));
    return readDecoderSparseLayers(f, root, c);
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
    e.gguf.architecture = "qwen2moe";
    // llama.cpp weighs the chosen experts by their softmax share, as Qwen1.5/2-MoE's configs say
    e.gguf.completeConfig = [](nlohmann::json& config, const std::function<bool(const std::string&)>&) { config["norm_topk_prob"] = false; };
    return e;
}

}  // namespace attnscope::engine::families::qwen2_moe
