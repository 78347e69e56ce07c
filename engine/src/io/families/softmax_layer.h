#pragma once
// The own attention of a layer that attends by softmax (io/families/family.h, LayerAttention): a
// `model_softmax` run with the layer's terms, described in words for titles and captions.

#include "io/families/family.h"

#include <cstdint>
#include <string>

namespace attnscope::engine {

struct SoftmaxLayerTerms {
    bool causal = false;
    std::int64_t window = 0;  ///< > 0: the layer's sliding window (model_softmax's `window`)
    double scale = 0;         ///< 0: 1/sqrt(d) of the Q the capture holds
    double softcap = 0;
    /// What else its scores carry, in words ("T5's bucketed relative position bias"): its forward
    /// puts the tensor in the layer's variant inputs.
    std::string bias;
    /// How its queries and keys came to be, in words ("rotary positions, 2 key/value heads").
    std::string positions;
    /// A learned sink logit per head joins each row's softmax (GPT-OSS): its forward puts the
    /// tensor in the layer's variant inputs (`sinks`).
    bool sinks = false;
};

LayerAttention softmaxLayer(const SoftmaxLayerTerms& terms);

}  // namespace attnscope::engine
