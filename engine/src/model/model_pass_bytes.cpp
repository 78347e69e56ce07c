#include "model/model_pass_bytes.h"

#include <algorithm>

namespace attnscope::engine {

ModelPassBytes modelPassBytes(const ModelConfig& config, std::int64_t n, bool keepAttention) {
    using U = std::uint64_t;
    constexpr U kFloat = sizeof(float);
    ModelPassBytes bytes;
    for (const auto& tensor : expectedTensors(config)) {
        U numel = 1;
        for (auto s : tensor.shape) numel *= static_cast<U>(s);
        bytes.weights += numel * kFloat;
    }
    const U tokens = static_cast<U>(std::max<std::int64_t>(n, 0));
    const U layers = static_cast<U>(config.numLayers), heads = static_cast<U>(config.numHeads);
    const U hidden = static_cast<U>(config.hiddenSize), headDim = static_cast<U>(config.headDim());
    const U inner = static_cast<U>(std::max<std::int64_t>(config.intermediateSize, config.hiddenSize));
    // Keys one query block attends: the whole text, or for Transformer-XL a segment and its memory
    // (the scores are made segment by segment, L queries at a time).
    U queries = tokens, keys = tokens, relative = 0;
    if (config.arch == ModelArch::TransfoXl) {
        queries = std::min<U>(tokens, static_cast<U>(config.transfoXl.tgtLen));
        keys = queries + static_cast<U>(config.transfoXl.memLen);
        relative = heads * keys * headDim;  // pos_keys per layer, kept as the variant's input
    }
    bytes.kept = layers * (3 * heads * tokens * headDim + relative) + (layers + 1) * tokens * hidden;
    if (keepAttention) bytes.kept += layers * heads * tokens * tokens;
    // scores and their softmax (Transformer-XL: content, position and shifted terms), the FFN's
    // inner activation, and a few [n, hidden] residuals and projections
    const U scoreCopies = config.arch == ModelArch::TransfoXl ? 4 : config.arch == ModelArch::SwitchTransformers ? 3 : 2;
    bytes.scratch = scoreCopies * heads * queries * keys + tokens * inner + 6 * tokens * hidden;
    bytes.kept *= kFloat;
    bytes.scratch *= kFloat;
    return bytes;
}

}  // namespace attnscope::engine
