// `qwen2`: Qwen2 (Yang et al. 2024), the Llama decoder with biases on q, k and v (never on o) and a
// sliding window only on the layers use_sliding_window / max_window_layers / layer_types name.

#include "io/families/llama/decoder.h"

namespace attnscope::engine::families::qwen2 {
namespace {

Result<void> readAttention(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    c.llama.qkvBias = true;  // q, k, v always with biases, o never
    c.llama.outputBias = false;
    return readQwenWindow(f, root, c);
}

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.vocab = 151936;
    traits.intermediate = 22016;
    traits.maxPositions = 32768;
    traits.readAttention = &readAttention;
    return readDecoderConfig(f, root, c, traits);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "qwen2";
    e.name = "Qwen2";
    e.reference = "transformers' Qwen2Model (modeling_qwen2.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOnly;
    e.gguf.architecture = "qwen2";
    return e;
}

}  // namespace attnscope::engine::families::qwen2
