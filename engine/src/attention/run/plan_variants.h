#pragma once
// The one planner of a request's variants, for the engine and the launcher alike: every variant
// known, its parameters resolved against its schema, and what the source adds — a causal model
// makes variants causal and lends its defaults (each with a notice), a model layer's own
// attention comes first when asked, a picture's token grid sets the 2-D variants' defaults.

#include "attention/run/planned_run.h"

#include <attnscope/image_input.h>
#include <attnscope/model.h>

#include <optional>
#include <string>

namespace attnscope::engine {

/// What the variants are planned against besides the request.
struct PlanSource {
    const ModelInfo* model = nullptr;      ///< the model giving Q, K, V; null: none
    std::optional<GridShape> imageGrid;    ///< the picture's token grid; none: not a picture
};

/// Plans the request's variants into `plan` (a notice for each parameter the source set goes to
/// `run.warnings`); errors name the unknown variant (listing `available`) or the bad parameter.
Result<void> planVariants(const RunRequest& request, const VariantLookup& lookup, const std::string& available,
                          const PlanSource& source, RunPlan& plan, RunResult& run);

}  // namespace attnscope::engine
