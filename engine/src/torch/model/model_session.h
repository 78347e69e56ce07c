#pragma once
// The engine's open checkpoint: the model, its tokenizer, and the last forward pass, kept so that
// running several variants (or several layers) on the same text costs one forward pass.

#include <attnscope/generation.h>
#include <attnscope/model.h>
#include <attnscope/model_tokenizer.h>

#include "base/runtime/run_context.h"
#include "base/runtime/buffer_pool.h"
#include "io/image/vit_preprocess.h"
#include "torch/model/transformer_model.h"
#include "attention/variants/variant.h"

#include <functional>
#include <optional>
#include <memory>
#include <string>

namespace attnscope::engine {

struct FamilyEntry;

class ModelSession {
public:
    using VariantLookup = std::function<const Variant*(const std::string& id)>;
    /// `lookup` finds the variant a model of the built-in trainer was trained with; every pass is
    /// checked against `memoryBudget` bytes (torch/model/model_pass_bytes.h) before it allocates.
    static Result<std::unique_ptr<ModelSession>> open(const std::string& folder, const VariantLookup& lookup,
                                                      std::uint64_t memoryBudget);

    const ModelInfo& info() const { return m_info; }
    /// Bytes a pass on `tokens` tokens needs (torch/model/model_pass_bytes.h); 0 for captured
    /// attention, read whole when it opened.
    std::uint64_t passBytes(std::int64_t tokens, bool keepAttention) const;

    /// Tokenizes (or takes `input.ids`), truncates to the model's positions with a notice, and
    /// runs the model. Throws EngineError / CancelledError.
    std::shared_ptr<const ModelForward> forward(const ModelInput& input, const ProgressFn& progress);
    /// Generates after the prompt (torch/model/model_generation.cpp). Throws EngineError as forward().
    GenerateResult generate(const GenerateRequest& request, const GeneratedTokenFn& onToken, const ProgressFn& progress);

    /// The Q, K, V of `layer` for `text`, from the cached pass when the text is the same.
    /// `tokens` and `notices` describe that pass. Throws EngineError / CancelledError.
    /// One forward pass and what it was run on.
    struct Pass {
        std::string text;
        bool addSpecialTokens = true;
        bool keepAttention = false;
        bool byIds = false;  ///< ran on given ids (a generated sequence), not on the text
        std::vector<std::int64_t> ids;
        TokenizedInput tokens;
        std::vector<bool> special;  ///< per token: a template special ([CLS], </s>, ...)
        std::vector<std::string> notices;
        ModelCapture capture;
    };
    /// The pass for `input`, reused when the last one ran on the same text with at least the
    /// same captures. Throws EngineError / CancelledError.
    const Pass& run(const ModelInput& input, const ProgressFn& progress);


    /// `inputs` (when not null) receives the layer's variant inputs (ModelCapture::variantInputs),
    /// `routing` (when not null) the layer's own router when its FFN is a Switch layer.
    Qkv layerQkv(const std::string& text, int layer, const ProgressFn& progress, TokenizedInput& tokens,
                 std::vector<std::string>& notices, std::map<std::string, PlainTensor>* inputs = nullptr,
                 std::optional<ModelRouting>* routing = nullptr) {
        ModelInput input;
        input.text = text;
        return layerQkv(input, layer, progress, tokens, notices, inputs, routing);
    }
    /// As above for any input (a picture for a vision model, whose pass keeps its attention).
    Qkv layerQkv(const ModelInput& input, int layer, const ProgressFn& progress, TokenizedInput& tokens,
                 std::vector<std::string>& notices, std::map<std::string, PlainTensor>* inputs = nullptr,
                 std::optional<ModelRouting>* routing = nullptr);

    /// The mean score by relative distance of `layer` in the last pass, with and without its
    /// rotary positions (torch/model/rotary_profile.h); nullopt for a model without them or when the
    /// pass has no q and k, and, with a notice, for a text over kRotaryProfileMaxTokens.
    std::optional<RotaryDistanceProfile> rotaryProfile(int layer, std::vector<std::string>& notices) const;
    /// The latent-attention profile of `layer` of the last pass (DeepSeek's MLA); none for other
    /// families or texts over kLatentProfileMaxTokens (a notice says so).
    std::optional<LatentAttentionProfile> latentProfile(int layer, std::vector<std::string>& notices) const;

    /// Every layer's attention [heads, n, n] of the last pass (empty when it kept none).
    std::vector<PlainTensor> lastPassAttention() const;

private:
    /// run() for a picture: prepared by the model's preprocessor, tokens placed on it
    /// (model_session_image.cpp). Refused for a text model.
    const Pass& runImage(const ModelInput& input, const ProgressFn& progress);
    /// Fills ModelInfo::layerAttention from the family's declaration (or the trained variant, whose
    /// hook the model then attends through).
    Result<void> declareOwnAttention(const VariantLookup& lookup, const FamilyEntry& family);
    /// A captured-attention file (torch/model/captured_attention.h) in place of a model: its one pass.
    static Result<std::unique_ptr<ModelSession>> openCaptured(const std::string& path, std::uint64_t memoryBudget);
    /// Throws EngineError(OutOfBudget) when a pass on `tokens` tokens would need more than the budget.
    void checkPassBudget(std::int64_t tokens, bool keepAttention) const;

    ModelInfo m_info;
    std::unique_ptr<TransformerModel> m_model;
    std::shared_ptr<const ModelTokenizer> m_tokenizer;
    std::unique_ptr<Pass> m_last;
    std::optional<ImagePreprocessor> m_preprocessor;  ///< a vision model's, from preprocessor_config.json
    bool m_captured = false;  ///< m_last is the file's pass, whatever the input
    BufferPool m_pool;  ///< for the variant attention of trained models
    std::uint64_t m_budget = 0;
};

/// A vocabulary id as a token of a run on ids: its decoded text, else its spelling, else the number.
Token tokenOfId(const ModelTokenizer* tokenizer, std::int64_t id);

}  // namespace attnscope::engine
