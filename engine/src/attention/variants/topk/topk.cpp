// `topk`: Explicit Sparse Transformer's top-k.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is topk_run.cpp (torch-free).

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeTopKWeights(const KeptState& state);  // topk_weights.cpp

namespace variants::topk {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "topk";
    info.name = "Explicit Sparse Transformer (top-k)";
    info.paper = "Zhao et al. 2019, Explicit Sparse Transformer, arXiv 1912.11637";
    info.summary = "Softmax over the k largest scores of each row; the rest are exactly 0.";
    info.params.push_back(tokenCount(intParam("k", 8, 1, 1 << 24, "Keys kept per query (at most m).")));
    info.params.push_back(boolParam("causal", false, "Mask keys j > i before choosing the top k."));
    info.params.push_back(choiceParam("ties", "keep", {"keep", "index"},
                                        "keep: every score >= the k-th largest is kept (the official code; may "
                                        "keep more than k); index: exactly k, lower key index first among ties."));
    info.reasons = {PatternReason::TopK};
    info.diagnosticsPage = DiagnosticsPage::Sparsity;
    info.diagnostics = {
        diagnostic("threshold", DType::F32, "[H, n]", DiagnosticWhen::Always, "The k-th largest score of each row."),
        diagnostic("kept", DType::I64, "[H, n]", DiagnosticWhen::Always, "Keys kept per row (ties at the threshold included)."),
    };
    info.atlasCoverage = {ParamValues{{"k", std::int64_t{16}}}};
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeTopKWeights}; }

}  // namespace variants::topk
}  // namespace attnscope::engine
