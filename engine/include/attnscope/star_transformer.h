#pragma once
// The Star-Transformer encoder (Guo et al. 2019) as fastNLP defines it, in eval mode: n satellites
// on a ring and one relay, updated over T cycles (docs/VARIANTS.md "Star-Transformer dynamics").
// Per cycle t: x = LayerNorm(hᵗ⁻¹); satellite i attends, per head, to the five keys
// [x_(i−1), x_i, x_(i+1), e_i, sᵗ⁻¹] (out-of-range neighbours are zero key and value vectors,
// score 0, unless `cyclic` closes the ring), hᵗ = leaky_relu(W_O · attn); the relay attends to
// [sᵗ⁻¹; hᵗ] with padded satellites masked, sᵗ = leaky_relu(W_O' · attn); padded nodes are zeroed.
// h⁰ = e (embeddings, plus position embeddings when the model has them), s⁰ = mean of all e.

#include <attnscope/tensor.h>
#include <attnscope/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

struct StarRequest {
    std::string text;
    /// A model folder (config.json with model_type "star-transformer", model.safetensors in
    /// fastNLP's names; bytes vocabulary); empty: random weights drawn from `seed`.
    std::string modelFolder;
    // The random model: the window's tokenizer and projections (hidden = heads × headDim, the
    // token states of the random projections as embeddings), `cycles` = T.
    TokenizerKind tokenizer = TokenizerKind::Words;
    std::uint64_t seed = 0;
    std::int64_t heads = 4, headDim = 32, cycles = 2;
    bool cyclic = false;
    /// [n], 1 = a padded position (its node is zeroed, the relay ignores it); empty: none.
    std::vector<std::uint8_t> padding;
};

struct StarPass {
    TokenizedInput input;
    std::string modelFolder;  ///< "" for the random model
    std::int64_t n = 0, cycles = 0, heads = 0, headDim = 0, hidden = 0;
    bool cyclic = false;
    PlainTensor ringWeights;   ///< F32 [T, H, n, 5]: left, self, right, embedding, relay
    PlainTensor relayWeights;  ///< F32 [T, H, n + 1]: the relay itself, then the satellites
    PlainTensor nodes;         ///< F32 [T + 1, n, hidden]: h⁰ … hᵀ
    PlainTensor relay;         ///< F32 [T + 1, hidden]: s⁰ … sᵀ
    PlainTensor nodeChange;    ///< F32 [T, n]: ‖hᵗ − hᵗ⁻¹‖
    static constexpr int kRingKeys = 5;
};

/// The key names of the ring attention, in its order.
inline const char* starRingKeyName(int key) {
    static const char* names[] = {"left", "self", "right", "embedding", "relay"};
    return key >= 0 && key < StarPass::kRingKeys ? names[key] : "?";
}

}  // namespace attnscope::engine
