// `full`: exact softmax attention, the reference every other variant is compared with.
// Its catalog entry (schema and facts) and how its weights come back from what a run kept; the
// run itself is full_run.cpp (torch-free).

#include "attention/catalog/param_specs.h"
#include "attention/catalog/variant_entry.h"

namespace attnscope::engine {

std::shared_ptr<const AttentionWeights> makeFullWeights(const KeptState& state);  // full_weights.cpp

namespace variants::full {
namespace {

VariantInfo info() {
    VariantInfo info;
    info.id = "full";
    info.name = "Full softmax attention";
    info.paper = "Vaswani et al. 2017, Attention Is All You Need, arXiv 1706.03762";
    info.summary = "softmax(QK^T / sqrt(d)) V over every key (or every key j <= i when causal).";
    ParamSpec causal;
    causal.name = "causal";
    causal.type = ParamType::Bool;
    causal.defaultValue = false;
    causal.minValue = 0;
    causal.maxValue = 1;
    causal.help = "Mask keys after the query (j > i + m - n).";
    info.params.push_back(causal);
    info.exact = true;
    info.reasons = {PatternReason::Dense, PatternReason::Causal};
    info.training = Training::Pattern;
    info.lraSpeedup = "1×";
    return info;
}

}  // namespace

VariantEntry entry() { return {info(), &makeFullWeights}; }

}  // namespace variants::full
}  // namespace attnscope::engine
