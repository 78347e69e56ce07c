#pragma once
// The Gemma decoder as Hugging Face's Gemma2Model and Gemma3TextModel compute and name it, shared by
// `gemma2` and `gemma3_text` (each its own folder): the Llama decoder's config fields and tensors
// (io/families/llama/decoder.h) plus what Gemma adds — query_pre_attn_scalar in the scale, soft-capped
// scores, sliding and global layers alternating, four RMS norms per layer scaling by (1 + weight),
// embeddings times √hidden_size, a GeGLU MLP; Gemma 3 besides: q/k norms per head and a rotary
// base of its own on the sliding layers.

#include "io/families/family.h"

namespace attnscope::engine {

/// What Gemma 2 and Gemma 3's config classes differ in.
struct GemmaTraits {
    std::int64_t vocab = 256000, maxPositions = 8192;
    double theta = 10000.0;
    double attnSoftcap = 50.0, finalSoftcap = 30.0;  ///< their defaults when config.json leaves them out
    /// Every `slidingPattern`-th layer is global, the others slide (HF's default layer_types:
    /// Gemma 2 every other layer from layer 0 on sliding, Gemma 3 five of six).
    std::int64_t slidingPattern = 2;
    bool qkNorm = false;     ///< Gemma 3: q_norm and k_norm per head
    bool localRope = false;  ///< Gemma 3: rope_local_base_freq on the sliding layers
};

/// Reads config.json's fields (from `root`, Gemma 3's text_config for a `gemma3` folder) into `c`.
Result<void> readGemmaConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c,
                             const GemmaTraits& traits);

/// "layers.N." tensors: the decoder's (q/k norms as Qwen3 names them) and the two feed-forward norms.
std::vector<ExpectedTensor> gemmaTensors(const ModelConfig& c);
/// Causal softmax of query_pre_attn_scalar^-½ · q·k, soft-capped, within the window on sliding layers.
LayerAttention gemmaAttention(const ModelConfig& c, std::int64_t layer);
/// The rotary positions layer `layer` turns by (Gemma 3's sliding layers: the local base).
const RopeSettings* gemmaRope(const ModelConfig& c, std::int64_t layer);

/// An entry with Gemma's tensors, prefixes (Gemma 3's text tower inside a multimodal file too),
/// attention and budget filled in.
FamilyEntry gemmaEntry();

}  // namespace attnscope::engine
