#pragma once
// What the engine tells about an opened checkpoint and what one forward pass captured, as plain
// data (no LibTorch). The engine keeps one model open at a time (DESIGN.md: the engine thread
// owns models).

#include <attnscope/image_input.h>
#include <attnscope/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnscope::engine {

/// A model the project's trainer wrote records how far it got (config.json "attnscope"): a head
/// of a model at chance accuracy is not evidence of anything.
struct TrainingRecord {
    std::int64_t steps = 0;
    std::optional<double> finalLoss, finalAccuracy, chanceAccuracy;
    std::string task;
    /// True when the held-out accuracy is within 10 % of chance (or below it).
    bool nearChance() const {
        return finalAccuracy && chanceAccuracy && *finalAccuracy <= *chanceAccuracy + 0.1 * (1.0 - *chanceAccuracy);
    }
};

/// The attention a model layer computes, as the engine reproduces it exactly (its family's
/// declaration): the computation (a variant id: `model_softmax` with the layer's terms,
/// `transformer_xl` with the model's memory, or the variant a trained model attends with), its
/// resolved parameters, the seed of its draws, and what it is in words.
struct LayerAttentionInfo {
    std::string variant;
    ParamValues params;
    std::optional<std::uint64_t> seed;
    std::string summary;  ///< "causal softmax, sliding window of 4096 keys, rotary positions"
};

struct ModelInfo {
    std::string folder;
    /// The family that reads it (its id: "bert", "mistral", "transfo-xl", …), or "captured" for a
    /// file of attention captured elsewhere.
    std::string arch;
    std::string familyName;       ///< for people: "Mistral", "Transformer-XL"
    std::string modelType;        ///< config.json's model_type ("roberta_switch", "deit")
    /// Per layer, its own attention; empty for captured attention (the file's weights are its own).
    std::vector<LayerAttentionInfo> layerAttention;
    /// arch "captured" (a file of attention captured elsewhere): the text its tokens spell,
    /// which is what every pass runs on.
    std::string capturedText;
    std::int64_t layers = 0, heads = 0, headDim = 0, hiddenSize = 0, vocabSize = 0;
    /// Key/value heads (grouped-query attention: query head h reads h / (heads / kvHeads)); = heads otherwise.
    std::int64_t kvHeads = 0;
    /// Per layer, the model's own sliding window (Mistral, Qwen2); 0 (or empty): every earlier key.
    std::vector<std::int64_t> layerWindows;
    std::int64_t maxTokens = 0;   ///< usable positions; longer inputs are truncated with a notice
    bool causal = false;
    std::uint64_t weightBytes = 0;
    /// Of those, the bytes a layer-by-layer pass holds mapped at once (its largest layer and the
    /// tensors outside the layers but the embedding); weightBytes for the other families.
    std::uint64_t residentWeightBytes = 0;
    std::string tokenizer;        ///< "wordpiece", "byte-level-bpe", "bytes", "sentencepiece", "image", or "" when the folder has none
    /// How the weights are stored: the file's format ("safetensors", "GGUF") and how many of the
    /// tensors the forward reads are in each type ("Q4_K" → 96, "F32" → 33): quantized weights
    /// are dequantized to F32 as they are read, so every figure is what the quantized model computes.
    std::string weightFormat;
    /// Engine::generate writes text with it (the Llama decoder's families).
    bool generates = false;
    std::map<std::string, std::int64_t> weightTypes;
    /// A vision model (arch "vit": ViT, DeiT, DINO) reads imageSize × imageSize pictures cut into
    /// patchSize patches, after prefixTokens extra tokens ([CLS], DeiT's distillation token); 0 for text models.
    std::int64_t imageSize = 0, patchSize = 0, prefixTokens = 0;
    std::string attention;        ///< "softmax", or the variant a trained model uses ("longformer window=4")
    std::vector<std::string> warnings;
    /// Parameters a variant takes from the model unless the request gives them, by variant id
    /// (a Transformer-XL model: transformer_xl's segment, memory and same_length).
    std::map<std::string, ParamValues> variantDefaults;
    std::optional<TrainingRecord> training;  ///< set for folders the project's trainer wrote
    /// A Switch model (`train --arch switch`): experts per FFN layer and the capacity its router
    /// routes with (factor, or slots when expertCapacity > 0); 0 experts for a dense model.
    std::int64_t experts = 0;
    double capacityFactor = 0;
    std::int64_t expertCapacity = 0;
    std::int64_t routerK = 1;      ///< choices per token (Mixtral: num_experts_per_tok)
    bool routerNormalize = false;  ///< gates renormalised over the k choices (Mixtral)
    /// DeepSeek's routers (RouterOptions has the meaning): scores, expert groups, gate scale; each
    /// layer's choice bias comes with the pass (ModelForward::routerChoiceBias).
    std::string routerScoring = "softmax";
    std::int64_t routerGroups = 1, routerKeptGroups = 1;
    std::string routerGroupScore = "max";
    double routerScale = 1.0;
    /// The layers whose FFN is routed (all of a roberta_switch model; every
    /// encoder_sparse_step-th of a switch_transformers one).
    std::vector<std::int64_t> expertLayers;
};

/// Text is tokenized with the model's own tokenizer (special tokens added as the model expects);
/// explicit `ids` skip the tokenizer (for tests and for callers with their own ids).
struct ModelInput {
    std::string text;
    /// A picture for a vision model (ModelInfo::imageSize > 0), prepared by the model's own
    /// preprocessor; only `image`, `name` and `mode` = patches matter (the grid is the model's).
    std::optional<ImageSpec> image;
    std::vector<std::int64_t> ids;
    bool addSpecialTokens = true;
    bool keepAttention = true;  ///< capture each layer's [heads, n, n] attention weights
};

struct ModelForward {
    TokenizedInput input;   ///< tokens with vocabulary ids and byte spans (empty spans for specials)
    std::int64_t layers = 0, heads = 0, n = 0, headDim = 0, hiddenSize = 0;
    bool causal = false;
    std::vector<QkvTensors> qkv;          ///< per layer: the model's own per-head Q, K, V
    std::vector<PlainTensor> attention;   ///< per layer: F32 [heads, n, n] (when kept)
    std::vector<PlainTensor> hidden;      ///< layers + 1 entries: F32 [n, hiddenSize]
    /// Per layer of a model with expert layers: F32 [n, experts], the router logits of the tokens
    /// entering the layer's FFN (attnscope-cli route --model routes them), indexed by layer; empty
    /// for a dense model, and an empty tensor for a dense layer between expert layers.
    std::vector<PlainTensor> routerLogits;
    /// Beside routerLogits, each layer's choice bias (DeepSeek-V3's e_score_correction_bias); empty where none.
    std::vector<std::vector<float>> routerChoiceBias;
    std::vector<std::string> notices;     ///< truncation, NaN weights, tokenizer notices
};

}  // namespace attnscope::engine
