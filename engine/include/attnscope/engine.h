#pragma once
// The engine: the one object that owns LibTorch state. Use from one thread at a time (the engine
// thread); every call is synchronous, cancellable through its ProgressFn, and never throws.

#include <attnscope/generation.h>
#include <attnscope/head_atlas.h>
#include <attnscope/log.h>
#include <attnscope/memory_budget.h>
#include <attnscope/model.h>
#include <attnscope/progress.h>
#include <attnscope/receptive_field.h>
#include <attnscope/result.h>
#include <attnscope/star_transformer.h>
#include <attnscope/train.h>
#include <attnscope/types.h>
#include <attnscope/variant_info.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

struct EngineOptions {
    /// Intra-op threads for LibTorch (at::set_num_threads); 0 = the number of cores.
    int threads = 0;
    /// Default bytes the n x n matrices of one request may take; 0 = kDefaultBudgetFraction of
    /// physical memory.
    std::uint64_t memoryBudgetBytes = 0;
    LogFn log;
};

class Engine {
public:
    /// Sets LibTorch's thread count and builds the variant registry.
    static Result<std::unique_ptr<Engine>> create(const EngineOptions& options = {});
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    /// id, display name, paper and parameter schema of every registered variant.
    std::vector<VariantInfo> variants() const;
    const VariantInfo* findVariant(const std::string& id) const;

    Result<TokenizedInput> tokenize(const InputSpec& input, const ProgressFn& progress = {}) const;

    /// Runs every requested variant on the same Q, K, V. Errors: InvalidArgument (unknown
    /// parameter, bad shape), NotFound (unknown variant), InvalidInput (invalid UTF-8, NaN),
    /// OutOfBudget (dense matrices over budget; checked before anything is allocated), Cancelled.
    Result<std::shared_ptr<const RunResult>> run(const RunRequest& request,
                                                 const ProgressFn& progress = {});

    /// Opens a model folder (config, weights mapped and shape-checked; weights are read on the
    /// first forward pass) and makes it the engine's current model.
    Result<ModelInfo> openModel(const std::string& folder);
    /// The current model, or nullptr.
    const ModelInfo* currentModel() const;
    /// Runs the current model (opened with openModel) on `input`, keeping every layer's Q, K, V.
    /// Texts longer than the model's positions are truncated with a notice.
    Result<std::shared_ptr<const ModelForward>> forwardModel(const ModelInput& input, const ProgressFn& progress = {});

    /// Generates text with the current model after `request.prompt` (attnscope/generation.h),
    /// `onToken` called after each token. Errors: InvalidArgument (no model open, a family whose
    /// decoder does not generate, settings out of range, a prompt with no room left in the model's
    /// positions), NotFound (no tokenizer or LM head), OutOfBudget, Cancelled (through `progress`).
    Result<GenerateResult> generate(const GenerateRequest& request, const GeneratedTokenFn& onToken = {},
                                    const ProgressFn& progress = {});

    /// Every layer's attention of the current model, a Transformer-XL one, on `text` as bands over
    /// the keys each query sees (what the receptive field reads: attnscope/receptive_field.h).
    /// Errors: InvalidArgument (no model open, another architecture, more than
    /// kMaxReceptiveFieldTokens tokens), OutOfBudget (the dense capture over the memory budget,
    /// checked before the pass), Cancelled.
    Result<std::shared_ptr<const ModelAttentionBands>> modelAttentionBands(const std::string& text,
                                                                          const ProgressFn& progress = {});
    static constexpr std::int64_t kMaxReceptiveFieldTokens = 4096;

    /// The Star-Transformer's cycles on `request.text` (attnscope/star_transformer.h), with a model
    /// folder's weights or random ones from the seed. Errors: InvalidArgument (cycles, heads or
    /// sizes out of range, an empty text, padding of another length), InvalidInput / NotFound (the
    /// folder: the file and tensor at fault), OutOfBudget, Cancelled (between cycles).
    Result<std::shared_ptr<const StarPass>> runStar(const StarRequest& request, const ProgressFn& progress = {});

    /// The head atlas of the current model on `request.text` (one forward pass, then every
    /// coverage setting on every layer's real Q/K/V). Cancellable between layers.
    Result<std::shared_ptr<const HeadAtlas>> analyzeModel(const AtlasRequest& request, const ProgressFn& progress = {});

    /// Trains a small model with `options.variant` as its attention and writes it to
    /// `options.out`. `onLog` is called every few steps with the loss and held-out accuracy;
    /// `progress` (stage "train") can cancel between steps.
    Result<TrainReport> train(const TrainOptions& options, const std::function<void(const TrainLogEntry&)>& onLog = {},
                              const ProgressFn& progress = {});

    std::uint64_t memoryBudgetBytes() const;
    int threads() const;

private:
    Engine();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace attnscope::engine
