#include "io/families/softmax_layer.h"

#include <attnscope/variant_info.h>

namespace attnscope::engine {

LayerAttention softmaxLayer(const SoftmaxLayerTerms& terms) {
    LayerAttention a;
    a.variant = "model_softmax";
    a.params = {{"causal", terms.causal}, {"window", terms.window}, {"scale", terms.scale}, {"softcap", terms.softcap}};
    a.summary = terms.causal ? "causal softmax" : "bidirectional softmax";
    if (terms.window > 0) a.summary += ", sliding window of " + std::to_string(terms.window) + " keys";
    if (terms.softcap > 0) a.summary += ", scores soft-capped at " + formatParamValue(terms.softcap);
    if (!terms.bias.empty()) a.summary += ", " + terms.bias;
    if (terms.sinks) a.summary += ", a learned sink per head beside the keys";
    if (!terms.positions.empty()) a.summary += ", " + terms.positions;
    return a;
}

}  // namespace attnscope::engine
