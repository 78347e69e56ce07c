// `qwen3`: Qwen3 (Qwen team 2025), the Llama decoder with an RMS norm on every query and key head
// (q_norm, k_norm over head_dim) before the rotation, head_dim 128 unless given, and Qwen2's
// optional sliding window.

#include "io/families/llama/decoder.h"

namespace attnscope::engine::families::qwen3 {
namespace {

Result<void> readAttention(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    if (auto bias = readAttentionBias(f, c); !bias) return bias;
    c.llama.qkNorm = QkNorm::PerHead;
    return readQwenWindow(f, root, c);
}

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.vocab = 151936;
    traits.intermediate = 22016;
    traits.maxPositions = 32768;
    traits.headDim = 128;
    traits.readAttention = &readAttention;
    return readDecoderConfig(f, root, c, traits);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "qwen3";
    e.name = "Qwen3";
    e.reference = "transformers' Qwen3Model (modeling_qwen3.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOnly;
    e.gguf.architecture = "qwen3";
    return e;
}

}  // namespace attnscope::engine::families::qwen3
