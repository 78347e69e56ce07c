// `bigbird`: BigBird's global, window and random blocks.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is bigbird_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"
#include "attention/variants/bigbird/bigbird_pattern.h"
#include "attention/weights/pattern_weights.h"

#include <limits>

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeBigBirdElementGraph(const KeptState& state);  // bigbird_element_graph.cpp

namespace variants::bigbird {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "bigbird";
    info.name = "BigBird (block sparse)";
    info.paper = "Zaheer et al. 2020, Big Bird: Transformers for Longer Sequences, arXiv 2007.14062";
    info.summary = "Blocks of b: first and last block global, a 3-block window and r random blocks per query "
                     "block (ITC), or extra global tokens prepended (ETC).";
    info.params.push_back(tokenCount(intParam("block", 4, 1, 1 << 20, "Block size b; n (ETC: n - extra_global) must be a multiple.")));
    info.params.push_back(intParam("random", 1, 0, 64, "Random key blocks r per query block (drawn from the seed)."));
    info.params.push_back(boolParam("count_duplicates", true,
                                      "A block listed twice (random hitting the window) counts twice in the softmax, "
                                      "as the reference kernels do; false = set semantics."));
    info.params.push_back(choiceParam("form", "itc", {"itc", "etc"},
                                        "itc: global tokens are the first and last block; etc: the first "
                                        "extra_global positions act as extra global tokens."));
    info.params.push_back(intParam("extra_global", 2, 0, 1 << 20, "ETC only: number of extra global tokens g."));
    info.params.back().usedWhen = "form=etc";
    info.params.push_back(boolParam("pad", false,
                                      "When b does not divide n (ETC: n - extra_global): pad the end with masked "
                                      "tokens to the next multiple and report the real tokens (false: refuse)."));
    info.reasons = {PatternReason::Global, PatternReason::Local, PatternReason::Random};
    info.diagnosticsPage = DiagnosticsPage::Sparsity;
    info.diagnostics = {
        diagnostic("rand_attn", DType::I64, "[H, random rows, r]", DiagnosticWhen::Always, "The random key blocks drawn for each query block."),
        diagnostic("rand_hits", DType::U8, "[H, random rows, r]", DiagnosticWhen::Always, "1 where a drawn block repeats a window or global block."),
        diagnostic("padded_length", DType::I64, "[1]", DiagnosticWhen::OnRequest, "pad = true: the length the blocks tiled (rows and keys past n are left out)."),
    };
    // Padded, so that the atlas measures it on every length, not only on multiples of the block.
    info.atlasCoverage = {ParamValues{{"block", std::int64_t{16}}, {"random", std::int64_t{2}}, {"pad", true}}};
    info.training = Training::Pattern;
    return info;
}

// pad = true ran on the padded length: its rows and keys past n are left out.
std::shared_ptr<const AttentionWeights> weights(const KeptState& state) {
    std::int64_t length = state.n;
    if (state.hasDraw("padded_length")) length = state.draw("padded_length", DType::I64, {1}).i64[0];
    if (length < state.n) throw EngineError(ErrorCode::InvalidInput, "bigbird: diagnostic.padded_length is below n");
    const BigBirdBlocks blocks = bigbirdBlocks(state.params, length);
    const PlainTensor& randAttn = state.draw("rand_attn", DType::I64, {state.heads, blocks.randomRows(), blocks.random});
    return makePatternWeights(bigbirdPattern(state.params, state.heads, length, randAttn), state, state.n, state.keyPadding);
}

// The paper's element-level pattern (reasons only), as the mask view's second layer.
std::map<std::string, std::shared_ptr<const AttentionWeights>> extraPatterns(const KeptState& state) {
    return {{"element_graph", makeBigBirdElementGraph(state)}};
}

}  // namespace

VariantEntry entry() { return {info(), &weights, &extraPatterns}; }

}  // namespace variants::bigbird
}  // namespace attnscope::engine
