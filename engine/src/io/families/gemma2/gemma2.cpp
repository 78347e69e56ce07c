// `gemma2`: Gemma 2 (Gemma Team 2024), the Gemma decoder (gemma_decoder.h) with scores soft-capped
// at attn_logit_softcapping (50 by default), every other layer from layer 0 on sliding (window 4096)
// and the ones between global, one rotary base for all.

#include "io/families/gemma2/gemma_decoder.h"

namespace attnscope::engine::families::gemma2 {
namespace {

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    return readGemmaConfig(f, root, c, GemmaTraits{});
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = gemmaEntry();
    e.id = "gemma2";
    e.name = "Gemma 2";
    e.reference = "transformers' Gemma2Model (modeling_gemma2.py)";
    e.readConfig = &readConfig;
    e.gguf.architecture = "gemma2";
    return e;
}

}  // namespace attnscope::engine::families::gemma2
