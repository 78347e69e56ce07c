// `entmax`: the Adaptively Sparse Transformer's alpha-entmax.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is entmax_run.cpp (torch-free).

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeEntmaxWeights(const KeptState& state);  // entmax_weights.cpp

namespace variants::entmax {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "entmax";
    info.name = "Adaptively Sparse Transformer (alpha-entmax)";
    info.paper = "Correia et al. 2019, Adaptively Sparse Transformers, arXiv 1909.00015";
    info.summary = "alpha-entmax over the scores: 1 = softmax, 1.5 = entmax15, 2 = sparsemax; exact zeros.";
    ParamSpec alpha;
    alpha.name = "alpha";
    alpha.type = ParamType::FloatList;
    alpha.defaultValue = std::vector<double>{1.5};
    alpha.minValue = 1;
    alpha.maxValue = 4;
    alpha.help = "alpha in [1, 4]: one value for all heads, or one per head.";
    info.params.push_back(alpha);
    info.params.push_back(boolParam("causal", false, "Mask keys j > i."));
    info.reasons = {PatternReason::Support};
    info.diagnosticsPage = DiagnosticsPage::Sparsity;
    info.diagnostics = {
        diagnostic("alpha", DType::F32, "[H]", DiagnosticWhen::Always, "The alpha each head used."),
        diagnostic("zeros", DType::I64, "[H, n]", DiagnosticWhen::Always, "Keys with weight exactly 0 per row."),
    };
    info.atlasCoverage = {ParamValues{{"alpha", std::vector<double>{1.5}}}};
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeEntmaxWeights}; }

}  // namespace variants::entmax
}  // namespace attnscope::engine
