#pragma once
// A run request on its way through the engine, torch-free: its variants with resolved parameters,
// its input and shape, the budget check, the variants' runs and the request's record. The engine
// (LibTorch: model, text and image inputs) and the launcher's torch-free runs (explicit q, k, v)
// both go through these steps.

#include "base/runtime/buffer_pool.h"
#include "base/runtime/qkv.h"
#include "io/image/image_tokens.h"
#include "attention/variants/variant.h"

#include <attnscope/log.h>
#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnscope::engine {

struct RunPlan {
    std::vector<const Variant*> variants;
    std::vector<ParamValues> resolved;
    std::vector<std::optional<std::uint64_t>> seeds;  ///< per variant: its draws' seed, unset: the projection's
    /// Index of the model layer's own attention among the variants; -1: none.
    int ownAttention = -1;
    ProblemShape shape;
    bool explicitInput = false;
    /// The first variant scans explicit values itself, in copies it makes anyway: that saves
    /// reading all of q, k and v once more; the variants after it get values known to be finite.
    bool variantScansValues = false;
    SharedQkv explicitQkv;
    Qkv modelQkv;
    /// The variants' inputs: the request's, else what the model's layer provides (Transformer-XL).
    std::map<std::string, PlainTensor> modelInputs;
    /// An image input's tokens and cell values (random projections).
    std::optional<ImageTokens> image;
};

/// Looks a variant up by id in a registry (null: unknown).
using VariantLookup = std::function<const Variant*(const std::string& id)>;

/// The unknown-variant error, listing what the registry has.
Error unknownVariant(const std::string& id, const std::string& available);

/// Appends the variant with `given` parameters resolved against its schema (and its own seed).
Result<void> planVariant(const Variant& variant, const ParamValues& given, RunPlan& plan,
                         std::optional<std::uint64_t> seed = std::nullopt);

/// Explicit q, k, v as the plan's input: shared (or copied from the request's tensors), shapes
/// checked, values too unless the first variant scans them as it runs.
Result<void> planExplicitInput(const RunRequest& request, RunPlan& plan);

/// The key padding's length and the dense limit, once the shape is known.
Result<void> checkPlanShape(const RunRequest& request, RunPlan& plan);

/// Everything the request allocates against the budget (the request's, else `defaultBudget`):
/// the random projections' Q, K, V (explicit and model inputs exist already) and every variant's
/// kept result and scratch.
Result<void> checkPlanBudget(const RunRequest& request, const RunPlan& plan, std::uint64_t defaultBudget);

/// A warning through `log` when the plan is estimated to take long on `threads` threads.
void warnIfLong(const RunPlan& plan, int threads, const LogFn& log);

/// Each variant on the same Q, K, V; its weights attached from what it kept (the code a result
/// file is read back with, so a tile read from a file is the tile the run gives), unless
/// `attach` is false (TorchFreeRunOptions::weightsOnDemand).
void runPlanned(const RunRequest& request, const ProgressFn& progress, RunPlan& plan, const Qkv& qkv, BufferPool& pool,
                RunResult& run, bool attach = true);

/// The run's last steps, whatever the input: the variants on `qkv` (with the request's key
/// padding), and the shape, Q, K and the request's record into `run`.
void runOnQkv(const RunRequest& request, const ProgressFn& progress, RunPlan& plan, Qkv qkv, BufferPool& pool, RunResult& run,
              bool attach = true);

/// The request as the result records it (RunResult::requestJson): the planned variants, the
/// model layer's own attention marked.
std::string requestJson(const RunRequest& request, const RunPlan& plan);

/// A whole run of explicit q, k, v (no model, text or image): the steps above.
Result<std::shared_ptr<RunResult>> runExplicitPlan(const RunRequest& request, const ProgressFn& progress,
                                                   const VariantLookup& lookup, const std::string& available,
                                                   BufferPool& pool, std::uint64_t defaultBudget, int threads,
                                                   const LogFn& log, bool attach = true);

}  // namespace attnscope::engine
