// `sparse_fixed`: the fixed Sparse Transformer.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is sparse_fixed_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"
#include "attention/variants/sparse_fixed/sparse_fixed_pattern.h"
#include "attention/weights/pattern_weights.h"

namespace attnscope::engine {

namespace variants::sparse_fixed {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "sparse_fixed";
    info.name = "Sparse Transformer (fixed)";
    info.paper = "Child et al. 2019, Generating Long Sequences with Sparse Transformers, arXiv 1904.10509";
    info.summary = "Every key of the query's block of l, plus the c summary cells of every block.";
    info.params.push_back(fromImage(tokenCount(intParam("block", 8, 1, 1 << 24,
                                                        "Block length l (at most n; n need not be a multiple). On an image's "
                                                        "pixels: the image's width (a block is a row, the paper's setting).")),
                                    ImageDefault::PixelGridWidth));
    info.params.push_back(tokenCount(intParam("summary", 2, 1, 1 << 24, "Summary cells c per block (1..l): by default the last c.")));
    info.params.push_back(boolParam("causal", true, "Only keys j <= i (the paper's setting)."));
    info.params.push_back(intListParam("summary_offsets", {}, 0, 1 << 24,
                                         "Start of the summary cells inside each block, one value or one per head "
                                         "(0..l-c); empty = l-c, the last c cells."));
    info.reasons = {PatternReason::Local, PatternReason::Summary};
    info.diagnosticsPage = DiagnosticsPage::Sparsity;
    info.atlasCoverage = {ParamValues{{"block", std::int64_t{16}}, {"summary", std::int64_t{4}}}};
    info.training = Training::Pattern;
    return info;
}

std::shared_ptr<const AttentionWeights> weights(const KeptState& state) {
    return makePatternWeights(sparseFixedPattern(state.params, state.heads, state.n), state, state.n, state.keyPadding);
}

}  // namespace

VariantEntry entry() { return {info(), &weights}; }

}  // namespace variants::sparse_fixed
}  // namespace attnscope::engine
