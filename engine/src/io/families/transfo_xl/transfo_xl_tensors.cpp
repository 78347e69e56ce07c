#include "io/families/transfo_xl/transfo_xl_tensors.h"

namespace attnscope::engine {

std::string transfoXlLayerName(std::int64_t layer, const std::string& leaf) {
    return "layers." + std::to_string(layer) + "." + leaf;
}

std::vector<ExpectedTensor> expectedTransfoXlTensors(const ModelConfig& c) {
    const std::int64_t d = c.hiddenSize, heads = c.numHeads, dh = c.headSize, inner = c.intermediateSize;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape) { out.push_back({std::move(name), std::move(shape)}); };
    add("word_emb.emb_layers.0.weight", {c.vocabSize, d});
    if (!c.transfoXl.untieR) {
        add("r_w_bias", {heads, dh});
        add("r_r_bias", {heads, dh});
    }
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        const auto name = [l](const char* leaf) { return transfoXlLayerName(l, leaf); };
        add(name("dec_attn.qkv_net.weight"), {3 * heads * dh, d});
        add(name("dec_attn.r_net.weight"), {heads * dh, d});
        add(name("dec_attn.o_net.weight"), {d, heads * dh});
        add(name("dec_attn.layer_norm.weight"), {d});
        add(name("dec_attn.layer_norm.bias"), {d});
        if (c.transfoXl.untieR) {
            add(name("dec_attn.r_w_bias"), {heads, dh});
            add(name("dec_attn.r_r_bias"), {heads, dh});
        }
        add(name("pos_ff.CoreNet.0.weight"), {inner, d});
        add(name("pos_ff.CoreNet.0.bias"), {inner});
        add(name("pos_ff.CoreNet.3.weight"), {d, inner});
        add(name("pos_ff.CoreNet.3.bias"), {d});
        add(name("pos_ff.layer_norm.weight"), {d});
        add(name("pos_ff.layer_norm.bias"), {d});
    }
    return out;
}

}  // namespace attnscope::engine
