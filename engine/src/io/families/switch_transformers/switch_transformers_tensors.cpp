#include "io/families/switch_transformers/switch_transformers_tensors.h"

namespace attnscope::engine {

std::string switchTransformersSublayer(std::int64_t block, int sublayer) {
    return "encoder.block." + std::to_string(block) + ".layer." + std::to_string(sublayer) + ".";
}

std::vector<ExpectedTensor> expectedSwitchTransformersTensors(const ModelConfig& c) {
    const std::int64_t d = c.hiddenSize, inner = c.numHeads * c.headSize, ff = c.intermediateSize;
    std::vector<ExpectedTensor> out;
    auto add = [&out](std::string name, std::vector<std::int64_t> shape) { out.push_back({std::move(name), std::move(shape)}); };
    for (std::int64_t l = 0; l < c.numLayers; ++l) {
        const std::string attn = switchTransformersSublayer(l, 0), ffn = switchTransformersSublayer(l, 1);
        // The first name decides whether the file's names carry a prefix (ModelCheckpoint).
        add(attn + "SelfAttention.q.weight", {inner, d});
        add(attn + "SelfAttention.k.weight", {inner, d});
        add(attn + "SelfAttention.v.weight", {inner, d});
        add(attn + "SelfAttention.o.weight", {d, inner});
        if (l == 0) add(attn + "SelfAttention.relative_attention_bias.weight", {c.t5.relativeBuckets, c.numHeads});
        add(attn + "layer_norm.weight", {d});
        add(ffn + "layer_norm.weight", {d});
        if (c.switchLayer(l)) {
            add(switchRouterWeight(ffn), {c.moe.experts, d});
            if (c.t5.routerBias) add(ffn + "mlp.router.classifier.bias", {c.moe.experts});
            for (std::int64_t e = 0; e < c.moe.experts; ++e) {
                add(switchExpertPrefix(ffn, e) + "wi.weight", {ff, d});
                add(switchExpertPrefix(ffn, e) + "wo.weight", {d, ff});
            }
        } else {
            add(ffn + "mlp.wi.weight", {ff, d});
            add(ffn + "mlp.wo.weight", {d, ff});
        }
    }
    add(kSwitchTransformersEmbedding, {c.vocabSize, d});
    add("encoder.final_layer_norm.weight", {d});
    return out;
}

}  // namespace attnscope::engine
