#pragma once
// The Llama decoder as Hugging Face's LlamaModel names it, which the Llama-family checkpoints
// share (`llama`, `mistral`, `qwen2`, `qwen3`, and the sparse experts of `mixtral`, `qwen2_moe`,
// `olmoe`: each its own folder): config.json's common fields (their config classes' names), the
// decoder's tensors without the "model." prefix of a ForCausalLM file, and its layers' attention.
// What differs per family (defaults, biases, q/k norms, the window, the experts) each family's
// folder gives in its DecoderTraits.

#include "io/families/family.h"

#include <string>
#include <vector>

namespace attnscope::engine {

/// What a decoder family's config class differs in.
struct DecoderTraits {
    // defaults of fields config.json leaves out
    std::int64_t vocab = 32000, hidden = 4096, intermediate = 11008, layers = 32, heads = 32, maxPositions = 2048;
    double eps = 1e-6, theta = 10000.0;
    std::int64_t bos = 1;
    /// The MLP's activation field, its default, and whether a GeLU (Gemma's GeGLU) rather than SiLU.
    const char* activationKey = "hidden_act";
    const char* activation = "silu";
    bool gelu = false;
    std::int64_t headDim = 0;  ///< head_dim's default; 0: hidden_size / num_attention_heads
    bool readsHeadDim = true;  ///< false: head_dim is never read (OLMoE: its q norm spans hidden_size)
    /// Biases, q/k norms, clip, window: the attention's fields (null: attention_bias only).
    Result<void> (*readAttention)(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) = nullptr;
    /// The experts of a sparse family (null: a dense MLP in every layer).
    Result<void> (*readExperts)(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) = nullptr;
};

/// Fills `c` from config.json as `traits` say. Refuses, naming the field, what the forward pass does
/// not compute: a rope_scaling type other than linear, dynamic, llama3 or yarn, an activation other
/// than SiLU, heads that do not divide into key/value groups.
Result<void> readDecoderConfig(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c,
                               const DecoderTraits& traits);

// Shared readers of the attention's fields, for the families' readAttention.
/// attention_bias: biases on q, k, v and o.
Result<void> readAttentionBias(const config_fields::FieldReader& f, ModelConfig& c);
/// sliding_window on every layer (Mistral, Mixtral); null or absent: none.
Result<void> readSlidingWindow(const config_fields::FieldReader& f, ModelConfig& c);
/// rope_scaling (null or an object) into `rope`: linear, dynamic, llama3, yarn, longrope (its factor
/// lists checked against the rotary dims of `headDim`); another type refused naming it.
Result<void> readRopeScaling(const config_fields::FieldReader& f, const nlohmann::json& root, std::int64_t maxPositions,
                             std::int64_t headDim, RopeSettings& rope);
/// `layer_types` (one "sliding_attention" or "full_attention" per layer) into per-layer flags;
/// absent or null: `sliding` unchanged.
Result<void> readLayerTypes(const config_fields::FieldReader& f, const nlohmann::json& root, std::int64_t layers,
                            std::vector<std::uint8_t>& sliding);
/// HF's default layer_types for alternating models: layer l slides unless l + 1 is a multiple of
/// `pattern` (Gemma 2 and GPT-OSS: 2, every other layer from layer 0 on; Gemma 3: 6).
std::vector<std::uint8_t> alternatingSlidingLayers(std::int64_t layers, std::int64_t pattern);
/// Qwen2 and Qwen3: the window only when use_sliding_window, on layers from max_window_layers on,
/// or as `layer_types` lists them.
Result<void> readQwenWindow(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c);

/// The experts' common fields: `countKey` experts (default `count`), num_experts_per_tok (default
/// `topK`), norm_topk_prob unless `alwaysNormalized`, router_aux_loss_coef; dropless.
struct ExpertFields {
    const char* countKey = "num_experts";
    std::int64_t count = 60, topK = 4;
    bool alwaysNormalized = false;
    double auxLossCoef = 0.001;
    ExpertLayout layout = ExpertLayout::Qwen;
};
Result<void> readExpertFields(const config_fields::FieldReader& f, ModelConfig& c, const ExpertFields& fields);

/// eos_token_id (an id or a list) into ModelConfig::stopTokenIds.
Result<void> readStopTokens(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c);

/// Qwen-MoE's sparse layers: every decoder_sparse_step-th, minus those mlp_only_layers lists.
Result<void> readDecoderSparseLayers(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c);

std::vector<ExpectedTensor> decoderTensors(const ModelConfig& config);
/// Causal softmax over rotary positions, within the sliding window on the layers that slide.
LayerAttention decoderAttention(const ModelConfig& config, std::int64_t layer);
/// The rotary settings (for the distance profile).
const RopeSettings* decoderRope(const ModelConfig& config, std::int64_t layer);
/// The sliding window's notice (what a variant run on a layer does not have).
std::vector<std::string> decoderNotices(const ModelConfig& config);

/// "layers.N." (then "self_attn.q_proj.weight", "mlp.gate_proj.weight", …).
std::string decoderLayerPrefix(std::int64_t layer);
/// A sparse layer's router [experts, hidden]: Mixtral's block_sparse_moe.gate, else mlp.gate.
std::string decoderRouterWeight(const ModelConfig& config, const std::string& layerPrefix);

/// The three matrices of a SwiGLU expert: down(silu(gate x) · up x).
struct DecoderExpertNames {
    std::string gate, up, down;
};
/// Expert e of the layer: Mixtral's block_sparse_moe.experts.e.{w1,w3,w2}, else mlp.experts.e.{gate,up,down}_proj.
DecoderExpertNames decoderExpertNames(const ModelConfig& config, const std::string& layerPrefix, std::int64_t expert);

/// What a `llama` GGUF file (Llama, Mistral, Mixtral) states by its tensors: biases when present.
void completeLlamaGgufConfig(nlohmann::json& config, const std::function<bool(const std::string&)>& has);

/// An entry with the decoder's tensors, prefixes, attention and budget filled in.
FamilyEntry decoderEntry();

}  // namespace attnscope::engine
