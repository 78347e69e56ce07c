// `model_softmax`: softmax attention with a model layer's own score terms — the computation
// behind "the model's own attention" of the families whose layers attend by softmax (DESIGN.md
// "Model families"): scale, soft-cap, causal mask, sliding window and relative position bias, as
// the family's declaration sets them for the layer. Not offered in the pickers: opening a model
// chooses it (VariantInfo::modelOnly). Catalog entry here, the run model_softmax_run.cpp, the rule
// both read attention/weights/softmax_score_rule.h.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"
#include "attention/variants/model_softmax/model_softmax_rule.h"
#include "attention/weights/softmax_row_weights.h"

namespace attnscope::engine {
namespace variants::model_softmax {
namespace {

ParamSpec floatParam(const std::string& name, double maxValue, const std::string& help) {
    return ParamSpec{name, ParamType::Float, 0.0, 0.0, maxValue, {}, help};
}

VariantInfo info() {
    VariantInfo info;
    info.id = "model_softmax";
    info.name = "Model's own softmax attention";
    info.paper = "the open model's architecture (its family's declaration, docs/VARIANTS.md \"The model's own attention\")";
    info.summary = "softmax over the keys the layer lets a query see (causal, sliding window) of scale·q·k, soft-capped "
                   "when the model caps it, plus its relative position bias, beside its heads' sinks when it has them: "
                   "exactly what the model's layer computes.";
    info.params.push_back(boolParam("causal", false, "Mask keys after the query (j > i + m - n)."));
    info.params.push_back(intParam("window", 0, 0, 1 << 30,
                                              "W > 0: a query sees the keys within W positions (causal: its last W keys, "
                                              "itself included; the model's sliding_window). 0: no window."));
    info.params.push_back(floatParam("scale", 1e6, "The factor on q·k; 0: 1/sqrt(d) (T5: 1, Gemma: query_pre_attn_scalar^-1/2)."));
    info.params.push_back(floatParam("softcap", 1e6, "c > 0: scores become c·tanh(s/c) (Gemma 2's attn_logit_softcapping); 0: none."));
    info.reasons = {PatternReason::Dense, PatternReason::Causal, PatternReason::Local};
    info.inputs = {diagnostic(kRelativeBias, DType::F32, "[H, n + m - 1]", DiagnosticWhen::OnRequest,
                              "The relative position bias added to score (i, j), at column j - i + n - 1 (T5's buckets)."),
                   diagnostic(kSinks, DType::F32, "[H]", DiagnosticWhen::OnRequest,
                              "Each head's learned sink logit (GPT-OSS): one more entry in every row's softmax, with no value, "
                              "so a row's weights sum to 1 minus the sink's share.")};
    info.diagnostics = info.inputs;  // kept with the result: its tiles need it
    info.diagnostics.push_back(diagnostic(kSoftcapSaturation, DType::F32, "[H]", DiagnosticWhen::OnRequest,
                                          "When softcap c > 0: per head, the share of the scores a query sees with "
                                          "|c·tanh(s/c)| ≥ 0.9 c, the ones the cap flattens (Gemma 2's soft-capping at work)."));
    info.diagnostics.push_back(diagnostic(kSinkShare, DType::F32, "[H, n]", DiagnosticWhen::OnRequest,
                                          "With sinks: each row's weight on its head's sink, exp(sink − shift) / sum = 1 − Σ_j w_ij."));
    info.modelOnly = true;
    return info;
}

std::shared_ptr<const AttentionWeights> weightsOf(const KeptState& state) {
    state.stat("row_max", DType::F32, {state.heads, state.n});
    state.stat("row_sum", DType::F32, {state.heads, state.n});
    const SoftmaxScoreRule rule = modelSoftmaxRule(state.params, state.heads, state.n, state.m, state.d,
                                                   state.hasDraw(kRelativeBias) ? &state.draw(kRelativeBias, DType::F32, {state.heads, state.n + state.m - 1})
                                                                                : nullptr,
                                                   state.hasDraw(kSinks) ? &state.draw(kSinks, DType::F32, {state.heads}) : nullptr);
    return std::make_shared<SoftmaxRowWeights>(state.q, state.k, rule, state.keyPadding, state.queryPadding(), modelSoftmaxReason(rule));
}

}  // namespace

VariantEntry entry() { return {info(), &weightsOf}; }

}  // namespace variants::model_softmax
}  // namespace attnscope::engine
