// `mixtral`: Mixtral (Jiang et al. 2024), Mistral's decoder whose every MLP is a sparse block:
// num_local_experts SwiGLU experts (block_sparse_moe.experts.e.{w1, w3, w2}), each token through its
// top num_experts_per_tok, their gates renormalised, dropless.

#include "io/families/llama/decoder.h"

namespace attnscope::engine::families::mixtral {
namespace {

Result<void> readAttention(const config_fields::FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    if (auto bias = readAttentionBias(f, c); !bias) return bias;
    return readSlidingWindow(f, c);
}

Result<void> readExperts(const config_fields::FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    ExpertFields fields;
    fields.countKey = "num_local_experts";
    fields.count = 8;
    fields.topK = 2;
    fields.alwaysNormalized = true;
    fields.layout = ExpertLayout::Mixtral;
    return readExpertFields(f, c, fields);
}

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.readAttention = &readAttention;
    traits.readExperts = &readExperts;
    return readDecoderConfig(f, root, c, traits);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "mixtral";
    e.name = "Mixtral";
    e.reference = "transformers' MixtralModel (modeling_mixtral.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOrSentencePiece;
    e.gguf.architecture = "llama";
    e.gguf.experts = GgufReading::Experts::With;
    e.gguf.permutedQk = true;
    e.gguf.completeConfig = [](nlohmann::json& config, const std::function<bool(const std::string&)>& has) {
        completeLlamaGgufConfig(config, has);
        if (config.contains("num_experts")) config["num_local_experts"] = config["num_experts"];  // Mixtral's name
        config.erase("num_experts");
    };
    return e;
}

}  // namespace attnscope::engine::families::mixtral
