// `linear`: the Linear Transformer's elu + 1 features.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is linear_kernel.cpp.

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeFeatureWeights(const KeptState& state);  // attention/weights/feature_weights.cpp

namespace variants::linear {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "linear";
    info.name = "Linear Transformer";
    info.paper = "Katharopoulos et al. 2020, Transformers are RNNs, arXiv 2006.16236";
    info.summary = "phi(Q) (phi(K)^T V) / phi(Q) sum phi(K) with phi = elu + 1; O(n) memory, causal by prefix sums.";
    info.params = {
        ParamSpec{"causal", ParamType::Bool, false, 0, 1, {}, "Prefix-sum (RNN) form: key j visible iff j <= i."},
        ParamSpec{"eps", ParamType::Float, 1e-6, 0.0, 1.0, {}, "Stabiliser of the denominator."},
        ParamSpec{"eps_mode", ParamType::Choice, std::string("denominator"), 0, 0, {"denominator", "kcumsum"},
                  "denominator: phi(q).z + eps (idiap); kcumsum: phi(q).(z + eps) (lucidrains)."},
    };
    info.approximatesSoftmax = true;
    info.diagnosticsPage = DiagnosticsPage::Approximation;
    info.reasons = {PatternReason::Dense, PatternReason::Causal};
    info.training = Training::Linear;
    info.lraSpeedup = "5.6×";
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeFeatureWeights}; }

}  // namespace variants::linear
}  // namespace attnscope::engine
