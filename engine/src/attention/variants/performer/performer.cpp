// `performer`: the Performer's FAVOR+ random features.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is performer_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeFeatureWeights(const KeptState& state);  // attention/weights/feature_weights.cpp

namespace variants::performer {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "performer";
    info.name = "Performer (FAVOR+)";
    info.paper = "Choromanski et al. 2021, Rethinking Attention with Performers, arXiv 2009.14794";
    info.summary = "Softmax kernel estimated with positive orthogonal random features; O(n m d) time, linear memory.";
    info.params = {
        ParamSpec{"nb_features", ParamType::Int, std::int64_t{0}, 0, 16384, {},
                  "Random features m; 0 = floor(d ln d) as the reference."},
        ParamSpec{"kernel", ParamType::Choice, std::string("softmax"), 0, 0, {"softmax", "relu"},
                  "softmax: positive features exp(w.x - |x|^2/2); relu: relu(w.x) + 1e-3 (generalized attention)."},
        ParamSpec{"ortho_scaling", ParamType::Int, std::int64_t{0}, 0, 1, {},
                  "0: rows scaled by Gaussian norms (unbiased); 1: rows scaled by sqrt(d)."},
        ParamSpec{"causal", ParamType::Bool, false, 0, 1, {}, "Prefix sums: key j visible iff j <= i."},
        ParamSpec{"feature_eps", ParamType::Float, 1e-4, 0.0, 1.0, {}, "Added inside the softmax features."},
        ParamSpec{"causal_eps", ParamType::Float, 1e-6, 0.0, 1.0, {}, "Added to the running key sum (causal)."},
    };
    info.approximatesSoftmax = true;
    info.errorSweepParam = "nb_features";
    info.diagnosticsPage = DiagnosticsPage::Approximation;
    info.reasons = {PatternReason::Dense, PatternReason::Causal};
    info.diagnostics = {
        diagnostic("projection", DType::F32, "[H, nb_features, d]", DiagnosticWhen::Always, "The orthogonal random features W drawn from the seed."),
        diagnostic("error_l1", DType::F32, "[H, n]", DiagnosticWhen::WithinDenseLimit, "Per row, the L1 distance of the implied weights from exact softmax."),
        diagnostic("error_mean", DType::F32, "[H]", DiagnosticWhen::WithinDenseLimit, "The mean of error_l1 per head."),
        diagnostic("key_eps_share", DType::F32, "[H]", DiagnosticWhen::WithinDenseLimit,
                   "Share of key features whose exponential term is below feature_eps (then eps outweighs the keys and weights flatten toward 1/m; 0 for the relu kernel)."),
    };
    info.atlasCoverage = {ParamValues{{"nb_features", std::int64_t{64}}}};
    info.training = Training::Performer;
    info.lraSpeedup = "5.7×";
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeFeatureWeights}; }

}  // namespace variants::performer
}  // namespace attnscope::engine
