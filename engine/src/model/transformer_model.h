#pragma once
// Forward pass of a trained checkpoint (BERT, RoBERTa, GPT-2, Transformer-XL, Switch
// Transformers, Llama, ViT) that keeps, for every layer, the real per-head Q, K, V the model attends
// with, its attention weights and the hidden states.

#include <attnscope/model_checkpoint.h>
#include <attnscope/moe_router.h>
#include <attnscope/progress.h>

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnscope::engine {

struct ModelCapture {
    std::vector<at::Tensor> q, k, v;  ///< per layer, [heads, n, headDim], contiguous
    std::vector<at::Tensor> attention; ///< per layer, [heads, n, n] (empty unless asked for)
    std::vector<at::Tensor> hidden;    ///< layers + 1 entries, [n, hidden]
    /// Per layer, what the layer's variant needs besides Q, K, V (Transformer-XL: its r_w_bias,
    /// r_r_bias and pos_keys, the `transformer_xl` variant's inputs); empty for the others.
    std::vector<std::map<std::string, PlainTensor>> variantInputs;
    /// Per layer of a Switch model, the router logits [n, experts] of the tokens entering its FFN
    /// (an undefined tensor for a dense layer between sparse ones).
    std::vector<at::Tensor> routerLogits;
};

/// The routing an expert layer applies at inference, from the model's own settings: top-1 (or
/// Mixtral's top-k, renormalised), the whole sequence one group, slots claimed in sequence order.
RouterOptions switchRouterOptions(const SwitchSettings& moe);

/// Throws CancelledError when `progress` asks to stop (stage "model").
void checkModelProgress(const ProgressFn& progress, std::int64_t done, std::int64_t total);

class TransformerModel {
public:
    /// Attention other than softmax, for models trained with another variant: q, k, v are
    /// [heads, n, headDim]; returns the context [heads, n, headDim] and, when `keepWeights`, sets
    /// `weights` to the dense [heads, n, n] weights.
    using AttentionHook = std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                   bool keepWeights, at::Tensor& weights)>;

    explicit TransformerModel(std::unique_ptr<ModelCheckpoint> checkpoint);
    void setAttentionHook(AttentionHook hook) { m_attentionHook = std::move(hook); }

    const ModelCheckpoint& checkpoint() const { return *m_checkpoint; }
    const ModelConfig& config() const { return m_checkpoint->config(); }

    /// Runs the model on vocabulary ids (already truncated to usablePositions()). Throws
    /// EngineError for bad ids and CancelledError when `progress` asks to stop (between layers).
    /// Non-fatal findings (NaN weights) are appended to `notices`.
    ModelCapture forward(const std::vector<std::int64_t>& ids, bool keepAttention, const ProgressFn& progress,
                         std::vector<std::string>& notices);
    /// Runs a ViT on a prepared picture: `pixels` [3, size, size] as its preprocessor leaves them
    /// (image/vit_preprocess.h). Throws as forward().
    ModelCapture forwardImage(const std::vector<float>& pixels, std::int64_t size, bool keepAttention, const ProgressFn& progress,
                              std::vector<std::string>& notices);

private:
    const at::Tensor& weight(const std::string& name);
    /// The rows `ids` of the embedding table `name` as F32 [n, hidden], read from the mapping:
    /// a 128k-token vocabulary is never converted whole.
    at::Tensor embeddingRows(const std::string& name, const at::Tensor& ids);
    /// Drops the F32 copies of the weights whose names start with `prefix` (a finished layer of a
    /// large decoder: the model is never held in F32 at once; the next pass reads them again).
    void releaseWeights(const std::string& prefix);
    void noteWeight(const std::string& notice);
    ModelCapture forwardBertLike(const at::Tensor& ids, bool keepAttention, const ProgressFn& progress);
    ModelCapture forwardGpt2(const at::Tensor& ids, bool keepAttention, const ProgressFn& progress);
    /// Segment by segment with each layer's memory (transfo_xl_forward.cpp).
    ModelCapture forwardTransfoXl(const at::Tensor& ids, bool keepAttention, const ProgressFn& progress);
    /// The Llama-family decoder (llama_forward.cpp).
    ModelCapture forwardLlama(const at::Tensor& ids, bool keepAttention, const ProgressFn& progress);
    /// The Vision Transformer encoder on pixels [3, S, S] (vit_forward.cpp).
    ModelCapture forwardVit(const at::Tensor& pixels, bool keepAttention, const ProgressFn& progress);
    /// The T5 encoder with Switch layers (switch_transformers_forward.cpp).
    ModelCapture forwardSwitchTransformers(const at::Tensor& ids, bool keepAttention, const ProgressFn& progress);
    /// Multi-head attention core shared by both families: q, k, v are [n, hidden].
    at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal, bool keepAttention,
                      ModelCapture& capture);
    at::Tensor activation(const at::Tensor& x) const;
    /// A Switch FFN (prefix "encoder.layer.N.", or "encoder.block.N.layer.1." for T5): each token
    /// through its router's expert, scaled by the gate; a token over its expert's capacity gets
    /// zeros (the residual carries it).
    at::Tensor switchFeedForward(const at::Tensor& x, const std::string& prefix, ModelCapture& capture);
    /// A Llama-family sparse block under "layers.N." (Mixtral, Qwen2-MoE, OLMoE): each token
    /// through its top-k SwiGLU experts weighted by their gates, plus Qwen2-MoE's gated shared
    /// expert (llama_forward.cpp).
    at::Tensor expertFeedForward(const at::Tensor& x, const std::string& prefix, ModelCapture& capture);

    std::unique_ptr<ModelCheckpoint> m_checkpoint;
    std::unordered_map<std::string, at::Tensor> m_weights;  ///< read on first use, kept until released
    std::unordered_multimap<std::int64_t, at::Tensor> m_spare;  ///< released buffers by element count, reused
    std::vector<std::string> m_weightNotices;
    AttentionHook m_attentionHook;
};

}  // namespace attnscope::engine
