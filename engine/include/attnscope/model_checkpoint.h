#pragma once
// Trained checkpoints in the Hugging Face folder layout (FORMATS.md §1): content sniffing,
// config.json read as allow-listed data, memory-mapped (sharded) safetensors, and every weight's
// shape checked against the config before any forward pass. Plain C++ (no LibTorch).

#include <attnscope/model.h>
#include <attnscope/result.h>
#include <attnscope/safetensors.h>
#include <attnscope/tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::engine {

/// What a file is, judged by its bytes rather than its name.
enum class FileKind {
    Missing, Empty, Safetensors, Gguf, GitLfsPointer, Html, TorchScriptZip, TorchPickleZip, Zip,
    Pickle, Json, Other,
};
const char* fileKindName(FileKind kind);

struct SniffedFile {
    FileKind kind = FileKind::Other;
    std::uint64_t size = 0;
};
/// Reads at most the first few KiB (and a zip's central directory names) of `path`.
SniffedFile sniffFile(const std::string& path);

/// The user-facing refusal for a file that is not usable weights (LFS pointer, HTML, pickle,
/// TorchScript, ...), or an empty string when `kind` is Safetensors.
std::string weightsFileProblem(const std::string& path, const SniffedFile& sniffed);

/// Transformer-XL's own settings (Hugging Face TransfoXLConfig names in brackets).
struct TransfoXlSettings {
    std::int64_t memLen = 0;     ///< [mem_len] M: cached positions per layer
    std::int64_t tgtLen = 0;     ///< [tgt_len] L: the segment length the text is read in
    std::int64_t clampLen = -1;  ///< [clamp_len] relative distances above it use it (<= 0: none)
    bool sameLength = false;     ///< [same_length]
    bool untieR = false;         ///< [untie_r] u, v per layer instead of shared
    bool preLnorm = false;       ///< [pre_lnorm]
};

/// Switch Transformer feed-forward layers (Fedus et al. 2021) in a BERT-like encoder: every
/// layer's FFN is `num_experts` experts behind a top-1 router (names as Hugging Face's
/// SwitchTransformersConfig where it has them). The project's trainer writes such folders
/// (`train --arch switch`); the router is `encoder.layer.N.mlp.router.classifier.weight` [E, h],
/// expert e's FFN `encoder.layer.N.mlp.experts.expert_{e}.intermediate.dense` / `.output.dense`.
struct SwitchSettings {
    std::int64_t experts = 0;      ///< [num_experts]; 0: dense FFN layers
    double capacityFactor = 1.25;  ///< [capacity_factor] 0: no capacity (dropless)
    std::int64_t expertCapacity = 0;  ///< [expert_capacity] slots per expert when > 0 (overrides the factor)
    double auxLossCoef = 0.01;     ///< [router_aux_loss_coef] as trained (recorded, not used at inference)
    double zLossCoef = 0.0;        ///< [router_z_loss_coef]
    /// Mixtral's router: [num_experts_per_tok] choices per token, gates renormalised over them, no
    /// capacity (dropless); 1 for the Switch models.
    std::int64_t topK = 1;
    bool normalizeTopK = false;
    /// DeepSeek's routers (RouterOptions has the meaning): scores by softmax or sigmoid, group-
    /// limited choice, routed_scaling_factor.
    std::string scoring = "softmax";
    std::int64_t expertGroups = 1, keptGroups = 1;
    std::string groupScore = "max";
    double gateScale = 1.0;
    bool active() const { return experts > 0; }
};

/// The T5 side of a Switch Transformers encoder (Hugging Face SwitchTransformersConfig names):
/// RMS layer norms without bias, unscaled q·k scores plus a relative position bias from
/// bucketed distances (learnt in block 0, shared by every block), and every
/// `encoder_sparse_step`-th FFN a Switch layer of `wi`/`wo` experts.
struct T5Settings {
    std::int64_t relativeBuckets = 32;       ///< [relative_attention_num_buckets]
    std::int64_t relativeMaxDistance = 128;  ///< [relative_attention_max_distance]
    /// [encoder_sparse_step] block l is sparse when step == 1 or l % step == 1; 0: none is.
    std::int64_t sparseStep = 0;
    bool routerBias = false;                 ///< [router_bias]
};

/// Rotary positions (Su et al. 2021) as Hugging Face's `modeling_rope_utils` computes their
/// inverse frequencies (config.json `rope_theta`, `rope_scaling`).
struct RopeSettings {
    double theta = 10000.0;       ///< [rope_theta]
    std::string scaling;          ///< [rope_scaling.rope_type]: "" (default), "linear", "dynamic", "llama3", "yarn", "longrope"
    double factor = 1.0;          ///< [rope_scaling.factor]
    double lowFreqFactor = 1.0;   ///< [rope_scaling.low_freq_factor] (llama3)
    double highFreqFactor = 4.0;  ///< [rope_scaling.high_freq_factor] (llama3)
    std::int64_t originalMaxPositions = 0;  ///< [rope_scaling.original_max_position_embeddings]
    double attentionFactor = 0;   ///< yarn: [rope_scaling.attention_factor]; 0: from mscale as HF derives it
    double betaFast = 32.0;       ///< yarn: [rope_scaling.beta_fast]
    double betaSlow = 1.0;        ///< yarn: [rope_scaling.beta_slow]
    double mscale = 0;            ///< yarn: [rope_scaling.mscale] (DeepSeek style); 0: absent
    double mscaleAllDim = 0;      ///< yarn: [rope_scaling.mscale_all_dim]; 0: absent
    bool truncate = true;         ///< yarn: [rope_scaling.truncate] correction range rounded to whole dims
    /// longrope (Phi-3): [rope_scaling.short_factor] and [long_factor], one divisor per frequency; the
    /// long ones for texts longer than originalMaxPositions. `factor` is then max_position_embeddings /
    /// original_max_position_embeddings (the attention factor's input).
    std::vector<double> shortFactor, longFactor;
    /// [partial_rotary_factor]: the first int(head_dim · it) features of a head are turned, the rest pass.
    double partialRotary = 1.0;
    /// The features of a head that turn: int(head_dim · partial_rotary_factor), as the reference.
    std::int64_t rotaryDims(std::int64_t headDim) const {
        return static_cast<std::int64_t>(static_cast<double>(headDim) * partialRotary);
    }
};

/// How a decoder normalises queries and keys before rotary positions.
enum class QkNorm {
    None,
    PerHead,  ///< Qwen3: RMSNorm with weight [head_dim] on every head after the split
    Whole,    ///< OLMoE: RMSNorm with weight [heads · head_dim] on the whole projection
};

/// Where a Llama-family MoE keeps its router and experts (Hugging Face names).
enum class ExpertLayout {
    Mixtral,  ///< block_sparse_moe.gate, block_sparse_moe.experts.e.{w1,w2,w3}
    Qwen,     ///< mlp.gate, mlp.experts.e.{gate,up,down}_proj (Qwen2-MoE, OLMoE)
    GptOss,   ///< mlp.router (with a bias), every expert in mlp.experts.{gate_up,down}_proj[_bias]
};

/// The decoder of Llama-family checkpoints (Hugging Face LlamaConfig / MistralConfig / Qwen2Config /
/// Qwen3Config / Qwen2MoeConfig / OlmoeConfig names): pre-norm RMS layer norms, grouped-query
/// attention over rotary positions, a SwiGLU MLP or SwiGLU experts.
struct LlamaSettings {
    bool qkvBias = false;            ///< q, k and v projections have biases ([attention_bias]; Qwen2: always)
    bool outputBias = false;         ///< o_proj has a bias ([attention_bias]; Qwen2: never)
    bool mlpBias = false;            ///< [mlp_bias]
    std::int64_t slidingWindow = 0;  ///< [sliding_window] a query sees the last W keys; 0: all
    /// Per layer whether the window applies (Qwen2's max_window_layers, layer_types); empty: every layer.
    std::vector<std::uint8_t> slidingLayers;
    QkNorm qkNorm = QkNorm::None;
    double clipQkv = 0;              ///< [clip_qkv] (OLMoE) q, k, v clamped to ±clip; 0: not clamped
    ExpertLayout expertLayout = ExpertLayout::Mixtral;
    std::int64_t expertInner = 0;    ///< an expert's intermediate size ([moe_intermediate_size], else intermediate_size)
    std::int64_t sharedExpertInner = 0;  ///< [shared_expert_intermediate_size] (Qwen2-MoE) 0: no shared expert
    /// Phi-3: q, k, v in one self_attn.qkv_proj (rows q, then k, then v) and the MLP's gate and up
    /// in one mlp.gate_up_proj (rows gate, then up).
    bool fusedProjections = false;
    RopeSettings rope;

    bool slides(std::int64_t layer) const {
        return slidingWindow > 0 && (slidingLayers.empty() || slidingLayers[static_cast<std::size_t>(layer)] != 0);
    }
};

/// Gemma 2 and Gemma 3 (Hugging Face Gemma2Config / Gemma3TextConfig names), beside the decoder's
/// LlamaSettings they share (biases, window and the layers it slides on, q/k norms, the global
/// layers' rotary positions): RMS norms scale by (1 + weight), four per layer; embeddings times
/// √hidden_size; a GeGLU MLP.
struct GemmaSettings {
    double queryPreAttnScalar = 256;  ///< [query_pre_attn_scalar] scores are q·k times its −½ power
    double attnSoftcap = 0;           ///< [attn_logit_softcapping] scores become c·tanh(s/c); 0: none
    /// [final_logit_softcapping] on the language-model head's logits (recorded: the analysis stops at
    /// the last hidden state); 0: none.
    double finalSoftcap = 0;
    /// Gemma 3's sliding layers turn by [rope_local_base_freq] without scaling; false: every layer
    /// turns as LlamaSettings::rope.
    bool localRopeOwn = false;
    RopeSettings localRope;
};

/// GPT-OSS (Hugging Face GptOssConfig names) beside the decoder's LlamaSettings (biases, window
/// and its layers, YaRN): a learned sink logit per head in every row's softmax, and its experts
/// fused per layer (mlp.experts.gate_up_proj [E, hidden, 2 · inner] with gate and up interleaved,
/// down_proj [E, inner, hidden], biases), behind a router with a bias; in BF16, or in MXFP4 as the
/// released checkpoints (`*_blocks` / `*_scales`).
struct GptOssSettings {
    double swigluLimit = 7.0;  ///< [swiglu_limit] gate clamped above, up clamped to ±limit
    double swigluAlpha = 1.702;  ///< the gate's sigmoid slope (a constant of the reference)
    bool mxfp4 = false;        ///< experts stored as MXFP4 blocks and scales (the file decides)
};

/// DeepSeek-V2 and V3's multi-head latent attention (Hugging Face DeepseekV2Config / DeepseekV3Config
/// names): queries through a low-rank q_a_proj → norm → q_b_proj (or one q_proj), keys and values
/// from a compressed latent (kv_a_proj_with_mqa → kv_a_layernorm → kv_b_proj) plus one rotary key
/// part shared by every head; each head's q·k = its non-rotary part's product + the rotary part's.
/// ModelConfig::headSize is qk_nope_head_dim + qk_rope_head_dim (the width of the Q and K kept).
struct DeepseekSettings {
    std::int64_t qLoraRank = 0;   ///< [q_lora_rank]; 0 (null): one q_proj
    std::int64_t kvLoraRank = 512;  ///< [kv_lora_rank] the latent's width
    std::int64_t qkNopeDim = 128, qkRopeDim = 64, vHeadDim = 128;  ///< [qk_nope_head_dim], [qk_rope_head_dim], [v_head_dim]
    /// Rotary pairs: (2i, 2i + 1) as DeepSeek's checkpoints (V2 always; V3 [rope_interleave]),
    /// else (i, i + r/2).
    bool ropeInterleave = true;
    /// The softmax's scale: (nope + rope)^−½ times yarn's mscale(factor, mscale_all_dim)² when
    /// rope_scaling sets mscale_all_dim.
    double scoreScale = 0;
    std::int64_t firstDenseLayers = 0;  ///< [first_k_dense_replace]
    std::int64_t moeLayerFreq = 1;      ///< [moe_layer_freq]
    std::int64_t sharedExperts = 0;     ///< [n_shared_experts]: one MLP of moe_intermediate_size × this
    bool choiceBias = false;            ///< V3: mlp.gate.e_score_correction_bias
};

/// A Switch layer's router weight under `layerPrefix` ("encoder.layer.N.").
inline std::string switchRouterWeight(const std::string& layerPrefix) { return layerPrefix + "mlp.router.classifier.weight"; }
/// The prefix of expert `e`'s FFN under `layerPrefix` (then "intermediate.dense…", "output.dense…").
inline std::string switchExpertPrefix(const std::string& layerPrefix, std::int64_t e) {
    return layerPrefix + "mlp.experts.expert_" + std::to_string(e) + ".";
}

/// Vision Transformers (Hugging Face ViTConfig / DeiTConfig names): the picture cut into
/// P × P patches by the patch embedding, a [CLS] token (and DeiT's distillation token) before
/// them, learnt absolute positions, pre-LN encoder layers (layernorm_before / layernorm_after).
struct VitSettings {
    std::int64_t imageSize = 224;  ///< [image_size] the square side the position table is laid out for
    std::int64_t patchSize = 16;   ///< [patch_size]
    bool qkvBias = true;           ///< [qkv_bias]
    bool distillationToken = false;  ///< DeiT (model_type deit): a second token after [CLS]
    bool clsToken = true;          ///< false for weights without embeddings.cls_token (the checkpoint decides)
    std::int64_t gridSide() const { return imageSize / patchSize; }
    std::int64_t prefixTokens() const { return (clsToken ? 1 : 0) + (distillationToken ? 1 : 0); }
};

enum class Activation { GeluErf, GeluTanh, Relu, Silu };

/// The fields of config.json the forward pass needs, range-checked. Unknown fields are ignored
/// (risky ones such as auto_map are reported in `notices`).
struct ModelConfig {
    /// The family that read it (io/families/family.h: its id, e.g. "mistral"), and the model_type
    /// config.json names ("roberta_switch" is read by the roberta family).
    std::string family;
    std::string modelType;
    std::int64_t vocabSize = 0;
    std::int64_t hiddenSize = 0;
    std::int64_t numLayers = 0;
    std::int64_t numHeads = 0;
    /// Key/value heads: query head h reads key head h / (numHeads / kvHeads) (grouped-query
    /// attention, [num_key_value_heads]); numHeads for every family without grouping.
    std::int64_t kvHeads = 0;
    /// The width of a head: [d_head], [d_kv], [head_dim] where the family has one, else
    /// hiddenSize / numHeads.
    std::int64_t headSize = 0;
    std::int64_t intermediateSize = 0;
    std::int64_t maxPositions = 0;     ///< rows of the position embedding table
    std::int64_t typeVocabSize = 0;    ///< 0 for GPT-2
    std::int64_t positionOffset = 0;   ///< RoBERTa: positions start at pad_token_id + 1
    std::int64_t padTokenId = -1;
    /// Put before (bos) and after (eos) the text by a SentencePiece tokenizer ([bos_token_id]
    /// of a decoder, T5's [eos_token_id]); -1: none.
    std::int64_t bosTokenId = -1, eosTokenId = -1;
    /// A decoder's end-of-text tokens ([eos_token_id], one id or a list): generation stops at any.
    std::vector<std::int64_t> stopTokenIds;
    double layerNormEps = 1e-12;
    Activation activation = Activation::GeluErf;
    bool causal = false;
    /// Models written by the built-in trainer record the attention they were trained with
    /// (config.json "attnscope": {"variant", "params", "seed"}); empty = ordinary softmax.
    std::string attentionVariant;
    std::map<std::string, std::string> attentionParams;  ///< as typed: parsed against the schema
    std::uint64_t attentionSeed = 0;
    /// What the trainer recorded of the training ("steps", "final_loss", "final_accuracy",
    /// "chance_accuracy", "task"); absent fields stay unset.
    std::optional<TrainingRecord> training;
    std::vector<std::string> notices;
    SwitchSettings moe;           ///< the experts and router of sparse FFN layers, when moe.active()
    /// Per layer whether its FFN is sparse (T5's encoder_sparse_step, Qwen2-MoE's
    /// decoder_sparse_step and mlp_only_layers); empty: every layer is, when moe.active().
    std::vector<std::uint8_t> sparseLayers;
    // Each family's own settings, read and used by its folder (io/families/<id>/) only.
    TransfoXlSettings transfoXl;
    T5Settings t5;
    LlamaSettings llama;
    GemmaSettings gemma;
    GptOssSettings gptOss;
    DeepseekSettings deepseek;
    VitSettings vit;

    std::int64_t headDim() const { return headSize; }
    /// Whether layer l's FFN is an expert layer (a router and its experts).
    bool switchLayer(std::int64_t l) const {
        if (!moe.active()) return false;
        return sparseLayers.empty() || sparseLayers[static_cast<std::size_t>(l)] != 0;
    }
    /// Tokens the model can take at once (positions minus the RoBERTa offset).
    std::int64_t usablePositions() const { return maxPositions - positionOffset; }
};

/// Parses config.json text. `source` names the file in errors.
Result<ModelConfig> parseModelConfig(const std::string& jsonText, const std::string& source);

/// How a family's forward reads a weight: whole in float32; one slice along the first dimension
/// at a time (an expert of a fused expert tensor, [experts, …]); or as bytes — MXFP4 blocks
/// [experts, rows, groups, 16] and their scales [experts, rows, groups], dequantized an expert at
/// a time.
enum class WeightRead { Whole, Sliced, PackedBlocks, PackedScales };

/// One weight the architecture needs: its name without the base-model prefix and its shape.
struct ExpectedTensor {
    std::string name;
    std::vector<std::int64_t> shape;
    WeightRead read = WeightRead::Whole;
};
/// Every tensor a forward pass with all attentions needs, derived from the config.
std::vector<ExpectedTensor> expectedTensors(const ModelConfig& config);

class GgufFile;
struct GgufTensor;

/// How many tensors a file stores in each type ("Q4_K" → 96), for what the window and the atlas say.
using StorageTypes = std::map<std::string, std::int64_t>;

/// A 2-D weight as the file stores it, rows in place in the mapping: ggml's type numbering (F32 0,
/// F16 1, BF16 30 for safetensors; any GGUF type), `rowBytes` per row of `cols` values. Generation
/// multiplies by it row by row without converting the whole matrix (kernels/stored_matvec.h).
struct StoredMatrix {
    std::uint32_t type = 0;
    const std::uint8_t* bytes = nullptr;
    std::int64_t rows = 0, cols = 0;
    std::uint64_t rowBytes = 0;
    /// llama.cpp's q/k row order to undo on the product (GgufPlace::permuteHeads); 0: none.
    std::int64_t permuteHeads = 0;
};

/// A validated model: a folder (config + tokenizer files present + weights mapped and checked) or
/// one GGUF file (its metadata read as the config, its tensors found under GGUF's names).
class ModelCheckpoint {
public:
    /// Opens `folder`: config.json, then model.safetensors or model.safetensors.index.json with
    /// its shards. Pickles, TorchScript, LFS pointers and HTML pages are refused with advice.
    /// A GGUF file (by its first bytes) opens as the model it holds.
    static Result<std::unique_ptr<ModelCheckpoint>> open(const std::string& folder);
    ~ModelCheckpoint();
    ModelCheckpoint(const ModelCheckpoint&) = delete;
    ModelCheckpoint& operator=(const ModelCheckpoint&) = delete;

    /// The folder, or the GGUF file's path.
    const std::string& folder() const { return m_folder; }
    /// The GGUF file the model was read from; nullptr for a folder.
    const GgufFile* gguf() const { return m_gguf.get(); }
    /// The storage type of every tensor the forward reads, counted: "F32", "BF16", "Q4_K", ….
    StorageTypes storageTypes() const;
    const ModelConfig& config() const { return m_config; }
    /// The base-model prefix found in the file ("bert.", "roberta.", "transformer." or "").
    const std::string& prefix() const { return m_prefix; }
    /// Non-fatal findings: unused tensors, dtypes upcast, total_size mismatch, NaN weights.
    const std::vector<std::string>& warnings() const { return m_warnings; }
    /// Total bytes of the mapped weight files.
    std::uint64_t mappedBytes() const;
    /// Bytes of the files a layer-by-layer pass holds mapped at once: every tensor it reads outside
    /// the layers but the embedding (read by rows), and its largest layer's (`layerStem` + N.…).
    std::uint64_t residentBytes(const std::string& layerStem) const;
    /// Drops the mapped pages of the tensors whose names (without prefix) start with `prefix`
    /// (SafetensorsFile::dropPages): a finished layer.
    void dropMappedPages(const std::string& prefix) const;

    /// Reads `name` (without prefix) converted to F32. Shapes were checked at open().
    Result<PlainTensor> readF32(const std::string& name) const;
    /// Rows of the 2-D tensor `name` as F32 (an embedding lookup that leaves the table mapped).
    Result<PlainTensor> readRowsF32(const std::string& name, const std::vector<std::int64_t>& rows) const;
    /// `name` converted to F32 into `out` of exactly its element count; whether all values are finite.
    Result<bool> readF32Into(const std::string& name, float* out, std::size_t count) const;
    /// The 2-D tensor `name` (or, for a 3-D one, its slice `index` along the first dimension) as
    /// stored; InvalidArgument for a type or rank it cannot be (F64, 1-D, MXFP4 blocks).
    Result<StoredMatrix> storedMatrix(const std::string& name, std::int64_t index = -1) const;
    /// Whether the files hold `name` (without prefix), expected or not (an LM head the analysis
    /// does not read): storedMatrix reads such a tensor too.
    bool holds(const std::string& name) const;
    /// The shape of `name` as the file holds it (checked against config.json at open()).
    std::vector<std::int64_t> shapeOf(const std::string& name) const;
    /// Slice `index` along the first dimension of the floating-point tensor `name` (rank >= 2)
    /// converted to F32 into `out` of exactly its element count; whether all values are finite.
    Result<bool> readSliceF32Into(const std::string& name, std::int64_t index, float* out, std::size_t count) const;
    /// Slice `index` of MXFP4 weights (`base` + "_blocks" [E, rows, groups, 16] U8 and "_scales"
    /// [E, rows, groups] U8) dequantized into `out` [rows, groups · 32] (io/checkpoint/mxfp4.h).
    Result<void> readMxfp4SliceInto(const std::string& base, std::int64_t index, float* out, std::size_t count) const;

private:
    ModelCheckpoint() = default;
    /// A forward's tensor in a GGUF file (io/checkpoint/gguf_model.h's GgufPlace, found).
    struct GgufLocated {
        const GgufTensor* tensor = nullptr;
        std::int64_t slice = -1;
        std::int64_t permuteHeads = 0;
        float addend = 0;
        std::vector<std::int64_t> shape;  ///< as the forward reads it (Hugging Face's order)
        std::uint64_t offset = 0, bytes = 0;  ///< the slice's bytes within the tensor's
    };
    // the GGUF side (io/checkpoint/gguf_checkpoint.cpp)
    static Result<std::unique_ptr<ModelCheckpoint>> openGguf(const std::string& path);
    Result<void> resolveGguf();
    Result<void> checkGgufLayers();
    const GgufLocated* findGguf(const std::string& name) const;
    Result<bool> readGgufInto(const GgufLocated& t, const std::string& name, float* out, std::size_t count) const;
    Result<PlainTensor> readGgufRows(const GgufLocated& t, const std::string& name, const std::vector<std::int64_t>& rows) const;
    std::uint64_t ggufResidentBytes(const std::string& layerStem) const;
    std::unique_ptr<GgufFile> m_gguf;
    std::map<std::string, GgufLocated> m_ggufResolved;
    struct Located {
        const SafetensorsFile* file = nullptr;
        const StTensorInfo* info = nullptr;
    };
    using TensorIndex = std::map<std::string, Located>;  ///< every tensor of the weight files by name
    // open()'s steps:
    Result<void> readConfig();
    Result<const SafetensorsFile*> openShard(const std::string& name);
    Result<TensorIndex> openWeights();
    Result<TensorIndex> openShardedWeights(const std::string& indexPath);
    Result<void> resolveExpected(const TensorIndex& all);
    Result<void> checkLayersAndUnused(const TensorIndex& all);
    std::string expertsProblem(const std::string& name, const std::string& layerStem) const;
    std::string m_folder;
    ModelConfig m_config;
    std::string m_prefix;
    std::vector<std::string> m_warnings;
    std::vector<std::unique_ptr<SafetensorsFile>> m_files;
    std::map<std::string, Located> m_resolved;  ///< expected name (no prefix) -> where it lives
    TensorIndex m_all;  ///< every tensor of the weight files, for storedMatrix's unexpected names
};

}  // namespace attnscope::engine
