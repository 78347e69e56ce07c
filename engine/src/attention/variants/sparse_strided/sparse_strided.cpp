// `sparse_strided`: the strided Sparse Transformer.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is sparse_strided_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"
#include "attention/variants/sparse_strided/sparse_strided_pattern.h"
#include "attention/weights/pattern_weights.h"

namespace attnscope::engine {

namespace variants::sparse_strided {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "sparse_strided";
    info.name = "Sparse Transformer (strided)";
    info.paper = "Child et al. 2019, Generating Long Sequences with Sparse Transformers, arXiv 1904.10509";
    info.summary = "Local band of l+1 (paper) or l (OpenAI) keys plus every l-th key; union or interleaved heads.";
    info.params.push_back(fromImage(tokenCount(intParam("stride", 8, 1, 1 << 24,
                                                        "Stride l (about sqrt(n)); must be at most n. On an image's pixels: "
                                                        "the image's width (row and column attention, the paper's setting).")),
                                    ImageDefault::PixelGridWidth));
    info.params.push_back(choiceParam("local", "paper", {"paper", "openai"},
                                        "Local band: paper = keys i-l..i (l+1 keys), openai = keys i-l+1..i (l keys)."));
    info.params.push_back(boolParam("causal", true, "Only keys j <= i (the paper's setting)."));
    info.params.push_back(choiceParam("combine", "union", {"union", "interleave"},
                                        "union: every head sees local and strided keys; interleave: even heads "
                                        "local, odd heads strided."));
    info.reasons = {PatternReason::Local, PatternReason::Stride};
    info.diagnosticsPage = DiagnosticsPage::Sparsity;
    info.atlasCoverage = {ParamValues{{"stride", std::int64_t{16}}}};
    info.training = Training::Pattern;
    return info;
}

std::shared_ptr<const AttentionWeights> weights(const KeptState& state) {
    return makePatternWeights(sparseStridedPattern(state.params, state.heads, state.n), state, state.n, state.keyPadding);
}

}  // namespace

VariantEntry entry() { return {info(), &weights}; }

}  // namespace variants::sparse_strided
}  // namespace attnscope::engine
