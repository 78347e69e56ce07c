#pragma once
// One token through the Llama decoder with a key/value cache (generation), in plain C++ over the
// weights as stored (StoredMatrix: quantized or BF16 rows multiplied in place): the same layer as
// llama_forward.cpp computes — RMS norm, q/k/v (biases, q/k norms, clip), rotary positions at the
// token's position, grouped-query attention over the cache (within the window on sliding layers),
// o, the residual, the SwiGLU MLP or the routed experts — then the final norm and the LM head.
// The full-sequence forward stays the reference for attention; tests hold the two to each other.

#include <attnscope/model_checkpoint.h>
#include <attnscope/moe_router.h>

#include <cstdint>
#include <vector>

namespace attnscope::engine {

/// The rotary positions of the decoder's heads, as the forward computes them for the text.
struct DecoderRotary {
    std::vector<float> inverseFrequencies;  ///< one per turned pair: the turned width is twice its size
    float attentionFactor = 1;              ///< cos and sin scaled by it (YaRN, LongRoPE)
};

/// Keys and values of the tokens so far, per layer [kvHeads, capacity, headDim].
struct DecoderCache {
    std::vector<std::vector<float>> keys, values;
    std::int64_t length = 0, capacity = 0;
    /// The layer whose weights a step keeps in `watched` [heads, length after the step]; -1: none.
    std::int64_t watchLayer = -1;
    std::vector<float> watched;
};

class DecoderStepper {
public:
    /// Checks that every matrix is there and stored in a multipliable type; `router` as the
    /// forward routes (switchRouterOptions).
    static Result<DecoderStepper> create(const ModelCheckpoint& checkpoint, RouterOptions router);

    /// An empty cache for `capacity` tokens.
    DecoderCache emptyCache(std::int64_t capacity) const;
    /// Runs token `id` at position cache.length, appends its keys and values, and returns the
    /// logits over the vocabulary. `rotary` for the current length (dynamic scalings change it).
    Result<std::vector<float>> step(std::int64_t id, DecoderCache& cache, const DecoderRotary& rotary) const;
    /// The logits of a final hidden state (after the final norm) [hidden].
    std::vector<float> logits(const float* finalHidden) const;

private:
    struct Layer {
        std::vector<float> inputNorm, postNorm, qNorm, kNorm, qBias, kBias, vBias, oBias;
        StoredMatrix q, k, v, o, qkv;           ///< qkv: Phi-3's fused projection
        StoredMatrix gate, up, down, gateUp;    ///< dense MLP (gateUp: Phi-3's fused)
        std::vector<float> gateBias, upBias, downBias;
        StoredMatrix router;                    ///< sparse layers: [experts, hidden]
        std::vector<StoredMatrix> expertGate, expertUp, expertDown;
        StoredMatrix sharedGate, sharedUp, sharedDown, sharedExpertGate;
        bool sparse = false, slides = false;
    };
    DecoderStepper() = default;
    Result<void> readLayer(std::int64_t l);
    void attention(const Layer& layer, std::int64_t l, std::vector<float>& x, DecoderCache& cache, const DecoderRotary& rotary) const;
    Result<void> feedForward(const Layer& layer, std::vector<float>& x) const;
    void rotate(float* head, std::int64_t position, const DecoderRotary& rotary) const;

    const ModelCheckpoint* m_checkpoint = nullptr;
    const ModelConfig* m_config = nullptr;
    RouterOptions m_router;
    std::vector<Layer> m_layers;
    std::vector<float> m_finalNorm;
    StoredMatrix m_head;  ///< lm_head, or the tied embedding
};

}  // namespace attnscope::engine
