// `qwen3_moe`: Qwen3-MoE (Qwen team 2025), Qwen3's attention (an RMS norm on every query and key
// head, no biases) with sparse layers that route each token to its top num_experts_per_tok of
// num_experts SwiGLU experts (mlp.experts.e.*), gates renormalised over the chosen when
// norm_topk_prob; no shared expert.

#include "io/families/llama/decoder.h"

namespace attnscope::engine::families::qwen3_moe {
namespace {

using namespace config_fields;

Result<void> readAttention(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    if (auto bias = readAttentionBias(f, c); !bias) return bias;
    c.llama.qkNorm = QkNorm::PerHead;
    return readQwenWindow(f, root, c);
}

Result<void> readExperts(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    ExpertFields fields;
    fields.count = 128;
    fields.topK = 8;
    if (auto common = readExpertFields(f, c, fields); !common) return common;
    ATTNSCOPE_TRY_ASSIGN(c.llama.expertInner, f.integer("moe_intermediate_size", 768, 1, kMaxIntermediate));
    return readDecoderSparseLayers(f, root, c);
}

Result<void> readConfig(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.vocab = 151936;
    traits.hidden = 2048;
    traits.intermediate = 6144;
    traits.layers = 24;
    traits.heads = 32;
    traits.maxPositions = 32768;
    traits.headDim = 128;
    traits.readAttention = &readAttention;
    traits.readExperts = &readExperts;
    return readDecoderConfig(f, root, c, traits);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "qwen3_moe";
    e.name = "Qwen3-MoE";
    e.reference = "transformers' Qwen3MoeModel (modeling_qwen3_moe.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOnly;
    e.gguf.architecture = "qwen3moe";
    // llama.cpp renormalises the chosen experts' gates, as Qwen3-MoE's configs say
    e.gguf.completeConfig = [](nlohmann::json& config, const std::function<bool(const std::string&)>&) { config["norm_topk_prob"] = true; };
    return e;
}

}  // namespace attnscope::engine::families::qwen3_moe
