// `phi3`: Phi-3 (Abdin et al. 2024), the Llama decoder with q, k, v fused in one qkv_proj and the
// MLP's gate and up in one gate_up_proj, LongRoPE scaling (rope_scaling short_factor / long_factor,
// the long list past original_max_position_embeddings), partial rotary positions
// (partial_rotary_factor), and a sliding window on every layer when sliding_window is set.

#include "io/families/llama/decoder.h"

namespace attnscope::engine::families::phi3 {
namespace {

Result<void> readAttention(const config_fields::FieldReader& f, const nlohmann::json&, ModelConfig& c) {
    if (auto bias = readAttentionBias(f, c); !bias) return bias;
    c.llama.fusedProjections = true;
    ATTNSCOPE_TRY_ASSIGN(c.llama.rope.partialRotary, f.number("partial_rotary_factor", 1.0, 0.0, 1.0));
    const std::int64_t rotary = c.llama.rope.rotaryDims(c.headSize);
    if (rotary < 2 || rotary % 2 != 0)
        return f.fail("partial_rotary_factor", "must turn an even number of features of a head (head_dim " +
                                                   std::to_string(c.headSize) + " gives " + std::to_string(rotary) + ")");
    return readSlidingWindow(f, c);
}

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    DecoderTraits traits;
    traits.vocab = 32064;
    traits.hidden = 3072;
    traits.intermediate = 8192;
    traits.maxPositions = 4096;
    traits.eps = 1e-5;
    traits.readAttention = &readAttention;
    return readDecoderConfig(f, root, c, traits);
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = decoderEntry();
    e.id = "phi3";
    e.name = "Phi-3";
    e.reference = "transformers' Phi3Model (modeling_phi3.py)";
    e.readConfig = &readConfig;
    e.tokenizer = TokenizerFiles::JsonOrSentencePiece;
    return e;
}

}  // namespace attnscope::engine::families::phi3
