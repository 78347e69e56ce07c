// `transformer_xl`: Transformer-XL's segment memory and relative positions (Dai et al. 2019).
// Its catalog entry (schema and facts); its weights are transformer_xl_weights.cpp, the run
// transformer_xl_run.cpp (torch-free), the rule they share transformer_xl_geometry.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeTransformerXlWeights(const KeptState& state);  // transformer_xl_weights.cpp

namespace variants::transformer_xl {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "transformer_xl";
    info.name = "Transformer-XL (segment memory, relative positions)";
    info.paper = "Dai et al. 2019, Transformer-XL: Attentive Language Models Beyond a Fixed-Length Context, arXiv 1901.02860";
    info.summary = "Query i of segment s = floor(i / L) attends keys max(0, s·L − M) … i: the cached memory and its own "
                   "segment, causally; scores ((q+u)·k_j + (q+v)·r_(i−j)) / sqrt(d) with relative encodings r.";
    info.params.push_back(intParam("segment", 64, 1, 1 << 24, "L: queries per segment (the reference's tgt_len)."));
    ParamSpec memory = intParam("memory", 64, 0, 1 << 24,
                                "M: keys of earlier segments kept as memory (mem_len); when not given, equal to segment.");
    memory.defaultFrom = "segment";
    info.params.push_back(memory);
    info.params.push_back(boolParam("relative", true,
                                    "Relative positions: add (q+v)·r_(i−j) and the bias u·k_j (the paper); off: q·k_j only."));
    info.params.push_back(boolParam("same_length", false,
                                    "Every query sees the same number of keys, the last M (the reference's evaluation "
                                    "mask); needs memory >= 1."));
    info.reasons = {PatternReason::Memory, PatternReason::Causal};
    info.diagnosticsPage = DiagnosticsPage::Memory;
    info.diagnostics = {
        diagnostic("r_w_bias", DType::F32, "[H, d]", DiagnosticWhen::Always, "u: the global content bias (term c: u·k_j)."),
        diagnostic("r_r_bias", DType::F32, "[H, d]", DiagnosticWhen::Always, "v: the global position bias (term d: v·r_(i−j))."),
        diagnostic("pos_keys", DType::F32, "[H, memory + segment, d]", DiagnosticWhen::Always,
                   "r_δ = W_r R(δ) for δ = 0 … M + L − 1: the projected sinusoidal relative encodings."),
    };
    // The same three, when the request gives them (a --qkv file), are used as given.
    info.inputs = info.diagnostics;
    info.atlasCoverage = {ParamValues{}};
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeTransformerXlWeights}; }

}  // namespace variants::transformer_xl
}  // namespace attnscope::engine
