// `linformer`: Linformer's low-rank projections.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is linformer_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeLinformerWeights(const KeptState& state);  // linformer_weights.cpp

namespace variants::linformer {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "linformer";
    info.name = "Linformer";
    info.paper = "Wang et al. 2020, Linformer: Self-Attention with Linear Complexity, arXiv 2006.04768";
    info.summary = "Keys and values projected along the sequence to k slots (E, F in R^{k x n}); O(n k).";
    info.params = {
        tokenCount(ParamSpec{"k", ParamType::Int, std::int64_t{64}, 1, 65536, {}, "Projected length; clamped to n (with a notice)."}),
        ParamSpec{"sharing", ParamType::Choice, std::string("headwise"), 0, 0, {"none", "headwise", "kv", "layerwise"},
                  "none: E, F per head; headwise: one E, one F for all heads; kv and layerwise: F = E."},
        ParamSpec{"projection", ParamType::Choice, std::string("random"), 0, 0, {"random", "identity"},
                  "random: U(-1/sqrt(k), 1/sqrt(k)) from the seed; identity: E = F = I (needs k = n; equals full)."},
        ParamSpec{"spectrum", ParamType::Bool, true, 0, 1, {},
                  "Singular values of the exact softmax matrix (n <= 2048, within the dense limit)."},
    };
    info.approximatesSoftmax = true;
    info.errorSweepParam = "k";
    info.diagnosticsPage = DiagnosticsPage::Approximation;
    info.reasons = {PatternReason::Dense};
    info.diagnostics = {
        diagnostic("E", DType::F32, "[k, n] or [H, k, n]", DiagnosticWhen::Always, "The key projection (one shared, or one per head)."),
        diagnostic("F", DType::F32, "[k, n] or [H, k, n]", DiagnosticWhen::Always, "The value projection."),
        diagnostic("singular_values", DType::F32, "[H, min(n, m)]", DiagnosticWhen::OnRequest, "spectrum = true, within the dense limit, n <= 2048: singular values of the exact softmax matrix."),
        diagnostic("energy", DType::F32, "[H, min(n, m)]", DiagnosticWhen::OnRequest, "Cumulative share of the squared singular values."),
        diagnostic("rank90", DType::I64, "[H]", DiagnosticWhen::OnRequest, "Singular values holding 90 % of the energy."),
    };
    info.atlasCoverage = {ParamValues{{"k", std::int64_t{64}}}};
    info.training = Training::Linformer;
    info.lraSpeedup = "5.5×";
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeLinformerWeights}; }

}  // namespace variants::linformer
}  // namespace attnscope::engine
