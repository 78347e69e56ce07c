// `olmoe`: OLMoE (Muennighoff et al. 2024), the Llama decoder with an RMS norm over the whole query
// and key projections (q_norm [heads · head_dim], k_norm [kv heads · head_dim]) and clip_qkv, and
// every MLP a sparse block of num_experts experts (mlp.experts.e.*), top num_experts_per_tok.

#include "io/families/llama/decoder.h"

namespace attnscope::engine::families::olmoe {
namespace {

using namespace config_fields;

Result<void> readAttention(const FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    if (auto bias = readAttentionBias(f, c); !bias) return bias;
    c.llama.qkNorm = QkNorm::Whole;
    ATTNSCOPE_TRY_ASSIGN(c.llama.clipQkv, f.number("clip_qkv", 0.0, 1e-6, 1e12, true));
    return {};
}

Result<void> readExperts(const FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    ExpertFields fields;
    fields.count = 64;
    fields.topK = 8;
    fields.auxLossCoef = 0.01;
    return readExpertFields(f, c, fields);
}

Result<void> readConfig(const FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.vocab = 50304;
    traits.hidden = 2048;
    traits.intermediate = 2048;
    traits.layers = 16;
    traits.heads = 16;
    traits.maxPositions = 4096;
    traits.eps = 1e-5;
    traits.readsHeadDim = false;  // its q norm spans hidden_size
    traits.readAttention = &readAttention;
    traits.readExperts = &readExperts;
    return readDecoderConfig(f, root, c, traits);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "olmoe";
    e.name = "OLMoE";
    e.reference = "transformers' OlmoeModel (modeling_olmoe.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOnly;
    return e;
}

}  // namespace attnscope::engine::families::olmoe
