// `star`: the Star-Transformer's ring and relay.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is star_run.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"
#include "attention/variants/star/star_pattern.h"
#include "attention/weights/pattern_weights.h"

namespace attnscope::engine {

namespace variants::star {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "star";
    info.name = "Star-Transformer (connectivity)";
    info.paper = "Guo et al. 2019, Star-Transformer, arXiv 1902.09113";
    info.summary = "Ring i-1, i, i+1 plus a relay key (column n, the mean of all keys and values).";
    info.params.push_back(boolParam("cyclic", false, "Close the ring (token 0 and n-1 are neighbours); the "
                                                       "reference (fastNLP) ring is open."));
    info.reasons = {PatternReason::Ring, PatternReason::Relay};
    info.diagnostics = {
        diagnostic("relay_weights", DType::F32, "[H, n + 1]", DiagnosticWhen::Always, "The relay's own row: its weights over the tokens and itself."),
        diagnostic("relay_output", DType::F32, "[H, d]", DiagnosticWhen::Always, "The relay's output."),
    };
    info.atlasCoverage = {ParamValues{}};
    info.diagnosticsPage = DiagnosticsPage::Star;  // the encoder's cycles (Engine::runStar)
    info.training = Training::Pattern;
    info.extraKeys = 1;  // the relay, key column n
    return info;
}

// Keys 0..n-1 and the relay key n, which is never padded.
std::shared_ptr<const AttentionWeights> weights(const KeptState& state) {
    std::vector<std::uint8_t> keyPadding = state.keyPadding;
    if (!keyPadding.empty()) keyPadding.push_back(0);
    return makePatternWeights(starPattern(state.params, state.heads, state.n), state, state.n + 1, std::move(keyPadding));
}

}  // namespace

VariantEntry entry() { return {info(), &weights}; }

}  // namespace variants::star
}  // namespace attnscope::engine
