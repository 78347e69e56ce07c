#pragma once
// A model family (DESIGN.md "Model families"): everything the rest of the program needs to know
// about one architecture, declared once in its folder, io/families/<id>/, and listed once in
// io/families/family_list.h — the model-side twin of the variant catalog. A family's folder holds
//   <id>.cpp          its declaration (FamilyEntry, torch-free): config fields and their checks,
//                     tensor names, tokenizer files, FFN, and the attention each layer computes;
//   <id>_forward.cpp  its forward pass (LibTorch: families::<id>::forward(), family_forward.h).
// Nothing outside the folder spells its id: the checkpoint reader, the session, the views and the
// app read the declaration.

#include <attnscope/model_checkpoint.h>
#include <attnscope/model_tokenizer.h>
#include <attnscope/variant_info.h>

#include "base/api/config_fields.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnscope::engine {

/// The attention a layer computes, as a run of the engine on the layer's Q, K, V: the computation
/// (a variant id: `model_softmax` with the layer's terms, `transformer_xl` with the model's memory,
/// or the variant a trained model attends with), its parameters, and, for a variant with random
/// draws, the seed they come from. The tensors it reads besides Q, K and V (T5's relative bias,
/// Transformer-XL's u, v and r) come from the layer's forward (ModelCapture::variantInputs).
struct LayerAttention {
    std::string variant;
    ParamValues params;
    std::optional<std::uint64_t> seed;
    std::string summary;  ///< in words: "causal, sliding window of 4096 keys, rotary positions"
};

/// Multi-head latent attention's widths (DeepSeek): each head's Q and K are [non-rotary | rotary],
/// every head's non-rotary key made from one latent of `latentRank` features.
struct LatentAttentionShape {
    std::int64_t nope = 0, rope = 0, latentRank = 0;
};

/// How a family reads GGUF files (llama.cpp's format, io/checkpoint/gguf_model.h): the architecture
/// name llama.cpp gives it, and what llama.cpp's converter did to the Hugging Face tensors and
/// config on the way.
struct GgufReading {
    std::string architecture;  ///< general.architecture ("qwen2moe"); empty: no GGUF files
    enum class Experts { Either, Without, With };
    Experts experts = Experts::Either;  ///< files with or without <arch>.expert_count (a `llama` file with experts is Mixtral)
    bool permutedQk = false;            ///< q/k rows reordered for llama.cpp's rotary kernel (pairs, not halves)
    float normAddend = 0;               ///< Gemma: norms stored as 1 + w, read back with −1
    /// Sets the config.json fields llama.cpp fixes for the architecture instead of storing them
    /// (`has`: whether the file holds a tensor, by GGUF name). May be null.
    void (*completeConfig)(nlohmann::json& config, const std::function<bool(const std::string&)>& has) = nullptr;
};

struct FamilyEntry {
    /// The config.json model_type it reads ("mistral"); what ModelInfo::arch says.
    std::string id;
    /// Further model_type values read by the same declaration ("roberta_switch", "deit").
    std::vector<std::string> alsoReads;
    std::string name;       ///< for people: "Mistral"
    std::string reference;  ///< the code its forward follows: "transformers' MistralModel"
    /// Reads and checks config.json's fields into `c` (c.family, c.modelType already set):
    /// every field it uses, as its reference checks it, a refusal naming the field.
    Result<void> (*readConfig)(const config_fields::FieldReader& f, const nlohmann::json& root, ModelConfig& c) = nullptr;
    /// Every tensor its forward reads, without the base-model prefix, first the one the prefix
    /// is found by.
    std::vector<ExpectedTensor> (*tensors)(const ModelConfig& c) = nullptr;
    /// Adjusts the config to what the weight files hold (`has`: whether a tensor, without prefix,
    /// is there), with a warning: a ViT without a class token reads patches only. May be null.
    void (*adaptToFile)(ModelConfig& c, const std::function<bool(const std::string&)>& has,
                        std::vector<std::string>& warnings) = nullptr;
    /// Base-model prefixes of its files, tried in order ("model.", "").
    std::vector<std::string> prefixes;
    /// A tensor some exports store under another name (T5's tied embedding): expected -> also read.
    std::map<std::string, std::string> alternativeNames;
    /// Where layer N's tensors start ("layers."): layers past num_hidden_layers are refused.
    std::string layerStem;
    /// What config.json fields make a layer dense or sparse, for refusals ("encoder_sparse_step 2").
    std::string (*expertLayersFrom)(const ModelConfig& c) = nullptr;
    TokenizerFiles tokenizer = TokenizerFiles::JsonOnly;
    /// Further model types whose tokenizer files are read as this family's ("longformer").
    std::vector<std::string> tokenizerAlso;
    /// The attention layer `layer` computes (its forward's own: window, bias, memory, causality).
    LayerAttention (*ownAttention)(const ModelConfig& c, std::int64_t layer) = nullptr;
    /// Its forward attends through the trained variant when the project's trainer recorded one
    /// (config.json "attnscope"): that is then every layer's own attention.
    bool takesTrainedVariant = false;
    /// Weights are read in float32 one layer at a time (a large decoder is never whole in float32):
    /// the memory budget counts its mapped files and its largest layer.
    bool layerByLayer = false;
    /// The rotary positions of layer `layer` (Gemma 3's local layers turn by another base), for the
    /// distance profile of the Diagnostics tab; null: none.
    const RopeSettings* (*rope)(const ModelConfig& c, std::int64_t layer) = nullptr;
    /// Its latent attention's widths, for the Diagnostics tab's latent page; null: none.
    LatentAttentionShape (*latentShape)(const ModelConfig& c) = nullptr;
    /// Parameters a variant takes from the model unless the request gives them (ModelInfo::variantDefaults).
    std::map<std::string, ParamValues> (*variantDefaults)(const ModelConfig& c) = nullptr;
    /// Copies of the score matrix its attention makes at once (the pass's memory estimate), and the
    /// queries and keys one block of them spans for a text of n tokens.
    int scoreCopies = 2;
    std::int64_t (*scoreRows)(const ModelConfig& c, std::int64_t n) = nullptr;  ///< null: n
    std::int64_t (*scoreKeys)(const ModelConfig& c, std::int64_t n) = nullptr;  ///< null: n
    /// Floats kept per layer besides Q, K, V (Transformer-XL's relative keys); null: none.
    std::int64_t (*keptPerLayer)(const ModelConfig& c, std::int64_t n) = nullptr;
    /// Notices for the person who opens such a model (what a variant run on its layers leaves out).
    std::vector<std::string> (*openNotices)(const ModelConfig& c) = nullptr;
    /// Reads pictures (a vision model): its preprocessor_config.json, not a tokenizer.
    bool vision = false;
    /// The GGUF files it reads, if any.
    GgufReading gguf;
    /// Not opened as a model folder (the Star-Transformer's cycles have their own pass): the
    /// refusal that says where it opens instead. Empty: opens.
    std::string opensElsewhere;
};

/// Every family's declaration, in list order (family_list.h).
const std::vector<FamilyEntry>& familyEntries();
/// The family reading `modelType` (its id or one of alsoReads); nullptr when none does.
const FamilyEntry* findFamily(const std::string& modelType);
/// The family of an opened config (ModelConfig::family); throws std::logic_error for none.
const FamilyEntry& familyOf(const ModelConfig& config);
/// "bert, roberta, …": every model_type the registry reads, for refusals.
std::string supportedModelTypes();
/// The family reading GGUF files of `architecture` (with or without experts); nullptr when none does.
const FamilyEntry* findGgufFamily(const std::string& architecture, bool withExperts);
/// "llama, qwen2, …": every GGUF architecture the registry reads, for refusals.
std::string supportedGgufArchitectures();

// Each family's declaration, made by its folder: families::<id>::entry().
#define ATTNSCOPE_DECLARE_FAMILY_ENTRY(id) \
    namespace families::id {               \
    FamilyEntry entry();                   \
    }

}  // namespace attnscope::engine
