#include "torch/model/model_pass_bytes.h"

#include "io/families/family.h"

#include <algorithm>
#include <string>

namespace attnscope::engine {
namespace {

// The floats a forward holds of the tensor at once: all, or one slice along the first dimension
// (an expert; MXFP4 blocks dequantize to two floats a byte, their scales to none).
std::uint64_t elements(const ExpectedTensor& tensor) {
    std::uint64_t numel = 1;
    for (auto s : tensor.shape) numel *= static_cast<std::uint64_t>(s);
    const std::uint64_t slices = tensor.shape.empty() ? 1 : static_cast<std::uint64_t>(std::max<std::int64_t>(tensor.shape[0], 1));
    switch (tensor.read) {
    case WeightRead::Whole: return numel;
    case WeightRead::Sliced: return numel / slices;
    case WeightRead::PackedBlocks: return 2 * numel / slices;
    case WeightRead::PackedScales: return 0;
    }
    return numel;
}

// A family that reads its weights layer by layer (the large decoders) holds one layer in F32 at a
// time and only the text's embedding rows (its first tensor); the others keep every weight in F32.
std::uint64_t weightBytesHeld(const ModelConfig& config, std::uint64_t tokens) {
    const FamilyEntry& family = familyOf(config);
    const std::string& stem = family.layerStem;
    std::uint64_t held = 0, layer = 0, largestLayer = 0;
    std::string currentLayer;
    const std::vector<ExpectedTensor> tensors = expectedTensors(config);
    for (const auto& tensor : tensors) {
        const std::uint64_t bytes = elements(tensor) * sizeof(float);
        if (!family.layerByLayer) {
            held += bytes;
        } else if (&tensor == &tensors.front()) {
            held += tokens * static_cast<std::uint64_t>(config.hiddenSize) * sizeof(float);
        } else if (tensor.name.compare(0, stem.size(), stem) == 0) {
            const std::string name = tensor.name.substr(0, tensor.name.find('.', stem.size()));
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
    // Keys one query block attends: the whole text, or what the family's blocks span (Transformer-XL:
    // a segment and its memory, the scores made L queries at a time); floats it keeps besides Q, K, V.
    const FamilyEntry& family = familyOf(config);
    const U queries = family.scoreRows ? static_cast<U>(family.scoreRows(config, n)) : tokens;
    const U keys = family.scoreKeys ? static_cast<U>(family.scoreKeys(config, n)) : tokens;
    const U relative = family.keptPerLayer ? static_cast<U>(family.keptPerLayer(config, n)) : 0;
    bytes.kept = layers * (3 * heads * tokens * headDim + relative) + (layers + 1) * tokens * hidden;
    if (keepAttention) bytes.kept += layers * heads * tokens * tokens;
    // scores and their softmax (Transformer-XL: content, position and shifted terms), the FFN's
    // inner activation, and a few [n, hidden] residuals and projections
    const U scoreCopies = static_cast<U>(family.scoreCopies);
    bytes.scratch = scoreCopies * heads * queries * keys + tokens * inner + 6 * tokens * hidden;
    bytes.kept *= kFloat;
    bytes.scratch *= kFloat;
    return bytes;
}

}  // namespace attnscope::engine
