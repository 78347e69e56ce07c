#pragma once
// Forward pass of a trained checkpoint, any family (io/families/family.h), that keeps, for every
// layer, the real per-head Q, K, V the model attends with, its attention weights and the hidden
// states.

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
    /// Per layer, what the layer's own attention reads besides Q, K, V (io/families/family.h,
    /// LayerAttention): Transformer-XL's r_w_bias, r_r_bias and pos_keys, T5's relative_bias;
    /// empty for the others.
    std::vector<std::map<std::string, PlainTensor>> variantInputs;
    /// Per layer of a model with expert layers, the router logits [n, experts] of the tokens
    /// entering its FFN, indexed by layer (an undefined tensor for a dense layer); empty for a
    /// model without experts.
    std::vector<at::Tensor> routerLogits;
    /// Beside routerLogits, each layer's choice bias [experts] (DeepSeek-V3's
    /// e_score_correction_bias, RouterOptions::choiceBias); empty where the router has none.
    std::vector<std::vector<float>> routerChoiceBias;
};

/// The routing an expert layer applies at inference, from the model's own settings: top-1 (or
/// Mixtral's top-k, renormalised), the whole sequence one group, slots claimed in sequence order.
RouterOptions switchRouterOptions(const SwitchSettings& moe);

/// Throws CancelledError when `progress` asks to stop (stage "model").
void checkModelProgress(const ProgressFn& progress, std::int64_t done, std::int64_t total);

/// Where a Switch layer keeps its experts' matrices under "…mlp.experts.expert_{e}." and whether
/// they and the router have biases: the trainer's are BERT FFNs (intermediate.dense, output.dense,
/// with biases), T5's wi and wo without.
struct SwitchExpertLayout {
    std::string inner = "intermediate.dense", outer = "output.dense";
    bool biases = true;
    bool routerBias = false;
};

/// A checkpoint's weights and the building blocks its family's forward (io/families/<id>/) runs on
/// them: weights read in float32 on first use (and released a layer at a time by the large
/// decoders), the multi-head softmax core, a Switch FFN. TransformerModel::forward runs the
/// family's forward (families/family_forward.h).
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
    /// Runs a vision model on a prepared picture: `pixels` [3, size, size] as its preprocessor
    /// leaves them (io/image/vit_preprocess.h). Throws as forward().
    ModelCapture forwardImage(const std::vector<float>& pixels, std::int64_t size, bool keepAttention, const ProgressFn& progress,
                              std::vector<std::string>& notices);

    // ---- for the families' forwards ----
    const at::Tensor& weight(const std::string& name);
    /// The rows `ids` of the embedding table `name` as F32 [n, hidden], read from the mapping:
    /// a 128k-token vocabulary is never converted whole.
    at::Tensor embeddingRows(const std::string& name, const at::Tensor& ids);
    /// Expert `index` of a fused expert tensor `name` ([experts, …]) in F32 [dims after the first],
    /// in a buffer kept for `slot` and reused by the next call with that slot (experts one at a time:
    /// the pages stay touched). Valid until that call.
    const at::Tensor& expertSlice(const std::string& name, std::int64_t index, int slot);
    /// Expert `index` of MXFP4 weights `base` + "_blocks" / "_scales" dequantized to F32 [rows, in],
    /// in the slot's buffer as expertSlice.
    const at::Tensor& mxfp4Slice(const std::string& base, std::int64_t index, int slot);
    /// Drops the F32 copies of the weights whose names start with `prefix` (a finished layer of a
    /// large decoder: the model is never held in F32 at once; the next pass reads them again).
    void releaseWeights(const std::string& prefix);
    /// Gives back the float32 buffers kept for the next pass to reuse (generation's steps read the
    /// stored weights instead, and need the memory for the file's pages).
    void freeSpareBuffers() {
        m_spare.clear();
        m_slices.clear();
    }
    /// Multi-head softmax attention (or the trained variant, through the hook): q, k, v are
    /// [n, hidden]; scores q·k / sqrt(head dim), future keys masked when `causal`. Captures the
    /// per-head Q, K, V (and the weights when `keepAttention`); returns the context [n, hidden].
    at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal, bool keepAttention,
                      ModelCapture& capture);
    /// The config's activation (hidden_act).
    at::Tensor activation(const at::Tensor& x) const;
    /// A Switch FFN under `prefix` ("encoder.layer.N.", or "encoder.block.N.layer.1." for T5): each
    /// token through its router's expert, scaled by the gate; a token over its expert's capacity
    /// gets zeros (the residual carries it). Captures the router logits.
    at::Tensor switchFeedForward(const at::Tensor& x, const std::string& prefix, const SwitchExpertLayout& layout,
                                 ModelCapture& capture);

private:
    void noteWeight(const std::string& notice);
    ModelCapture run(const at::Tensor& input, bool keepAttention, const ProgressFn& progress, std::vector<std::string>& notices);

    std::unique_ptr<ModelCheckpoint> m_checkpoint;
    std::unordered_map<std::string, at::Tensor> m_weights;  ///< read on first use, kept until released
    std::unordered_multimap<std::int64_t, at::Tensor> m_spare;  ///< released buffers by element count, reused
    std::map<int, at::Tensor> m_slices;  ///< expertSlice's and mxfp4Slice's buffers by slot
    at::Tensor& sliceBuffer(int slot, const std::vector<std::int64_t>& shape);
    std::vector<std::string> m_weightNotices;
    AttentionHook m_attentionHook;
};

}  // namespace attnscope::engine
