#pragma once
// The Star-Transformer's weights (fastNLP's state-dict names) and its forward pass in eval mode
// (attnscope/star_transformer.h). Conv2d 1×1 weights [out, in, 1, 1] are kept as [out, in].

#include <attnscope/progress.h>
#include <attnscope/star_transformer.h>

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

namespace attnscope::engine::star {

struct Attention {
    at::Tensor wq, bq, wk, bk, wv, bv, wo, bo;  ///< [H·d, hidden] and [H·d]; wo [hidden, H·d], bo [hidden]
};

struct Weights {
    std::int64_t hidden = 0, heads = 0, headDim = 0, cycles = 0, maxLen = 0, vocab = 0;
    bool cyclic = false;
    double layerNormEps = 1e-6;   ///< fastNLP's; config.json `layer_norm_eps` may say otherwise
    double negativeSlope = 0.01;  ///< leaky_relu's; config.json `negative_slope` may say otherwise
    /// The folder's vocab.txt (one token per line, id = line; words are looked up); empty: bytes.
    std::map<std::string, std::int64_t> vocabulary;
    at::Tensor embedding;  ///< [vocab, hidden]; undefined for the random model (token states instead)
    at::Tensor posEmb;     ///< [maxLen, hidden] or undefined
    std::vector<at::Tensor> normWeight, normBias;  ///< per cycle [hidden]
    std::vector<Attention> ring, relay;            ///< per cycle
};

/// config.json, model.safetensors and the tokenizer (vocab.txt, or bytes when vocab_size is 256)
/// of `folder`. Throws EngineError naming the file and the field or tensor at fault.
Weights loadWeights(const std::string& folder);
/// Random weights from the seed: W entries N(0, 1/in), biases 0, LayerNorm 1 and 0.
Weights randomWeights(std::int64_t heads, std::int64_t headDim, std::int64_t cycles, bool cyclic, std::uint64_t seed);

/// One cycle for a batch: nodes, e [B, n, hidden], relay [B, hidden], padded [B, n] bool. Without
/// the relay (`useRelay` false: the trainer's ablation) the ring has four keys. Differentiable.
struct Cycle {
    at::Tensor nodes, relay;  ///< hᵗ [B, n, hidden] (padded zeroed), sᵗ [B, hidden]
    at::Tensor alpha;         ///< [B, n, K, H] the satellites' weights (K = 5 or 4)
    at::Tensor beta;          ///< [B, H, n + 1] the relay's weights
};
Cycle cycle(const Weights& w, std::int64_t t, const at::Tensor& nodes, const at::Tensor& relay, const at::Tensor& e,
            const at::Tensor& padded, bool useRelay);
/// e = embeddings + the position embeddings when the model has them ([..., n, hidden]).
at::Tensor embed(const Weights& w, const at::Tensor& embeddings);

/// The cycles from the embeddings [n, hidden]; `padding` [n] or empty. Checks progress between
/// cycles (CancelledError).
StarPass forward(const Weights& w, const at::Tensor& embeddings, const std::vector<std::uint8_t>& padding,
                 const ProgressFn& progress);

}  // namespace attnscope::engine::star
