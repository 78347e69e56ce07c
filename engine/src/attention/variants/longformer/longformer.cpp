// `longformer`: Longformer's sliding window with global tokens.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is longformer_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"
#include "attention/variants/longformer/longformer_pattern.h"
#include "attention/weights/pattern_weights.h"

#include <limits>

namespace attnscope::engine {

namespace variants::longformer {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "longformer";
    info.name = "Longformer";
    info.paper = "Beltagy et al. 2020, Longformer: The Long-Document Transformer, arXiv 2004.05150";
    info.summary = "Sliding window i-w*d .. i+w*d in steps of d, plus global tokens that attend to and are "
                     "attended by every token.";
    info.params.push_back(tokenCount(intParam("window", 4, 0, 1 << 24,
                                     "Keys per side w (one-sided, as allenai; HF attention_window = 2w). Below n.")));
    info.params.push_back(intListParam("dilation", {1}, 1, 1 << 20,
                                         "Dilation d: one value for all heads, or one value per head."));
    info.params.push_back(intListParam("global", {}, 0, std::numeric_limits<std::int32_t>::max(),
                                         "Global token indices (distinct, below n)."));
    info.params.push_back(boolParam("causal", false, "Only keys j <= i, global entries included."));
    info.reasons = {PatternReason::Local, PatternReason::Dilated, PatternReason::Global};
    info.diagnosticsPage = DiagnosticsPage::Sparsity;
    info.atlasCoverage = {ParamValues{{"window", std::int64_t{16}}}, ParamValues{{"window", std::int64_t{64}}}};
    info.training = Training::Pattern;
    info.compareDefault = true;
    info.lraSpeedup = "5.3× (Local)";
    return info;
}

std::shared_ptr<const AttentionWeights> weights(const KeptState& state) {
    return makePatternWeights(longformerPattern(state.params, state.heads, state.n), state, state.n, state.keyPadding);
}

}  // namespace

VariantEntry entry() { return {info(), &weights}; }

}  // namespace variants::longformer
}  // namespace attnscope::engine
