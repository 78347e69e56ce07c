// `mistral`: Mistral (Jiang et al. 2023), the Llama decoder (families/llama) with a sliding window
// on every layer: a query sees its last `sliding_window` keys, itself included.

#include "io/families/llama/decoder.h"

namespace attnscope::engine::families::mistral {
namespace {

Result<void> readAttention(const config_fields::FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    if (auto bias = readAttentionBias(f, c); !bias) return bias;
    return readSlidingWindow(f, c);
}

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.readAttention = &readAttention;
    return readDecoderConfig(f, root, c, traits);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "mistral";
    e.name = "Mistral";
    e.reference = "transformers' MistralModel (modeling_mistral.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOrSentencePiece;
    return e;
}

}  // namespace attnscope::engine::families::mistral
