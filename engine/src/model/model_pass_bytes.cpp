#include "model/model_pass_bytes.h"

#include <algorithm>
#include <string>

namespace attnscope::engine {
namespace {

std::uint64_t elements(const ExpectedTensor& tensor) {
    std::uint64_t numel = 1;
    for (auto s : tensor.shape) numel *= static_cast<std::uint64_t>(s);
    return numel;
}

// Llama-family decoders hold one layer in F32 at a time and only the text's embedding rows
// (llama_forward.cpp); the other architectures keep every weight in F32.
std::uint64_t weightBytesHeld(const ModelConfig& config, std::uint64_t tokens) {
    std::uint64_t held = 0, layer = 0, largestLayer = 0;
    std::string currentLayer;
    for (const auto& tensor : expectedTensors(config)) {
        const std::uint64_t bytes = elements(tensor) * sizeof(float);
        if (config.arch != ModelArch::Llama) {
            held += bytes;
        } else if (tensor.name == "embed_tokens.weight") {
            held += tokens * static_cast<std::uint64_t>(config.hiddenSize) * sizeof(float);
        } else if (tensor.name.compare(0, 7, "layers.") == 0) {
            const std::string name = tensor.name.substr(0, tensor.name.find('.', 7));
            if (name != currentLayer) layer = 0;
            currentLayer = name;
            layer += bytes;
            largestLayer = std::max(largestLayer, layer);
        } else {
            held += bytes;
        }
    }
    return held + largestLayer;
}

}  // namespace


ModelPassBytes modelPassBytes(const ModelConfig& config, std::int64_t n, bool keepAttention) {
    using U = std::uint64_t;
    constexpr U kFloat = sizeof(float);
    ModelPassBytes bytes;
    const U tokens = static_cast<U>(std::max<std::int64_t>(n, 0));
    bytes.weights = weightBytesHeld(config, tokens);
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
