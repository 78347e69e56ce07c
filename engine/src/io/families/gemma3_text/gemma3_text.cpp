// `gemma3_text` (and the text tower of a multimodal `gemma3` folder, its config's text_config):
// Gemma 3 (Gemma Team 2025), the Gemma decoder (io/families/gemma2/gemma_decoder.h) with q and k
// RMS-normed per head, five sliding layers to one global (sliding_window_pattern 6, or
// layer_types), the sliding layers turning by rope_local_base_freq and the global ones by
// rope_theta with rope_scaling, no soft-capping unless the config sets it.

#include "io/families/gemma2/gemma_decoder.h"

namespace attnscope::engine::families::gemma3_text {
namespace {

GemmaTraits gemma3Traits() {
    GemmaTraits t;
    t.vocab = 262208;
    t.maxPositions = 131072;
    t.theta = 1'000'000.0;
    t.attnSoftcap = 0;
    t.finalSoftcap = 0;
    t.slidingPattern = 6;
    t.qkNorm = true;
    t.localRope = true;
    return t;
}

Result<void> readConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) {
    if (c.modelType != "gemma3") return readGemmaConfig(f, root, c, gemma3Traits());
    // the multimodal config: the text tower's fields under text_config (its defaults when absent)
    static const nlohmann::json empty = nlohmann::json::object();
    const auto it = root.find("text_config");
    if (it != root.end() && !it->is_null() && !it->is_object()) return f.fail("text_config", "must be an object");
    const nlohmann::json& text = it != root.end() && it->is_object() ? *it : empty;
    return readGemmaConfig(config_fields::FieldReader(text, f.source() + ": text_config"), text, c, gemma3Traits());
}

}  // namespace

FamilyEntry entry() {
    FamilyEntry e = gemmaEntry();
    e.id = "gemma3_text";
    e.alsoReads = {"gemma3"};
    e.name = "Gemma 3";
    e.reference = "transformers' Gemma3TextModel (modeling_gemma3.py)";
    e.readConfig = &readConfig;
    e.gguf.architecture = "gemma3";  // (llama.cpp makes every sixth layer global, Gemma 3's default)
    return e;
}

}  // namespace attnscope::engine::families::gemma3_text
