#pragma once
// Plain data that flows through the engine's public API (DESIGN.md "The data contract").

#include <attnscope/attention_weights.h>
#include <attnscope/image_input.h>
#include <attnscope/pattern_reason.h>
#include <attnscope/tensor.h>
#include <attnscope/variant_info.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace attnscope::engine {

// ---- input ---------------------------------------------------------------------------------

enum class TokenizerKind {
    Bytes,  ///< one token per UTF-8 byte
    Chars,  ///< one token per Unicode code point
    Words,  ///< runs of letters/digits/marks; each punctuation or symbol alone; spaces dropped
    Model,  ///< a trained model's own tokenizer: set by the engine on checkpoint runs, not requestable
    Pixels,   ///< an image's grid cells (set by the engine for image input)
    Patches,  ///< an image's P × P patches (set by the engine for image input)
};
const char* tokenizerName(TokenizerKind kind);  ///< "bytes", "chars", "words", "model", "pixels", "patches"

struct Token {
    std::string text;          ///< the token's bytes, copied from the source
    std::int64_t byteBegin = 0;  ///< [byteBegin, byteEnd) in the source text
    std::int64_t byteEnd = 0;
    std::int64_t id = 0;       ///< byte value, code point, or a stable hash of the word text
    /// An image token's grid cell (TokenizedInput::image maps it to the picture); -1 for text
    /// and for an image's extra tokens (CLS).
    std::int32_t row = -1, col = -1;
};

struct TokenizedInput {
    std::string text;
    TokenizerKind kind = TokenizerKind::Words;
    std::vector<Token> tokens;
    /// Set when the tokens are an image's pixels or patches: where each sits in the picture.
    std::optional<ImageGrid> image;
};

struct InputSpec {
    std::string text;
    TokenizerKind tokenizer = TokenizerKind::Words;
    /// An image instead of text (random projections, or a ViT model's own preprocessing).
    std::optional<ImageSpec> image;
};

/// Explicit Q, K, V (float32, [heads, n, d] each, row-major). Key and query counts may differ
/// only for variants that support it; `full` requires q and k to share d and k and v to share n.
struct QkvTensors {
    PlainTensor q, k, v;
};

/// Explicit Q, K, V in storage the caller shares with the results (a mapped file, a model's
/// tensors): the run reads them in place and its results keep q and k without a copy.
struct SharedQkv {
    SharedFloats q, k, v;  ///< F32 [heads, n, d], [heads, m, d], [heads, m, d]
};

/// Settings of the "random projections" Q/K/V source: token embedding + sinusoidal position,
/// then per-head W_q, W_k, W_v drawn from `seed`. Bit-identical for the same seed and input.
struct ProjectionSpec {
    int heads = 4;
    int headDim = 32;
    int modelDim = 0;  ///< 0 means heads * headDim
    std::uint64_t seed = 0;
    /// > 0: every query and key row (of any source) is rescaled to this Euclidean norm before
    /// the variants run, e.g. d^(1/4), where FAVOR+'s estimate converges as its paper shows
    /// (|x| d^(-1/4) = 1); 0: Q and K as computed. Recorded in the request JSON as `qk_norm`.
    double qkNorm = 0;
};

// ---- result ----------------------------------------------------------------------------------


/// A listing of a pattern in CSR form (`--write-pattern`; built from a result's weights on
/// request, never kept by a run). Rows are (head, query) pairs laid out head-major when `perHead`
/// is true ([heads * n + 1] row pointers), or one set of n rows shared by every head. Column
/// indices are sorted within a row; a key listed twice counts twice (VARIANTS.md).
struct SparsePattern {
    std::int64_t rows = 0;  ///< queries n
    std::int64_t cols = 0;  ///< keys m
    bool perHead = false;
    std::vector<std::int64_t> rowPtr;  ///< [(perHead ? heads : 1) * rows + 1]
    std::vector<std::int32_t> colIdx;  ///< [nnz]
    std::vector<std::uint8_t> reason;  ///< [nnz] PatternReason

    std::int64_t nnz() const { return static_cast<std::int64_t>(colIdx.size()); }
};

struct StageTime {
    std::string stage;
    double seconds = 0;
};

struct Counters {
    std::vector<StageTime> stages;  ///< wall time per stage, in order
    double seconds = 0;             ///< attention computation only (no tokenizing, no I/O)
    std::uint64_t peakBytes = 0;    ///< peak bytes of engine-owned buffers live during the run
    double flops = 0;               ///< multiply-adds counted as 2 FLOPs
    std::int64_t entriesComputed = 0;  ///< score entries (q, k pairs) evaluated
};

struct AttentionResult {
    std::string variantId;
    ParamValues params;  ///< resolved: defaults filled in, automatic values replaced by those used
    std::int64_t heads = 0, n = 0, m = 0, d = 0;
    SharedTensorF32 output;   ///< [heads, n, d]
    /// The exact weights, recomputed on demand from what the result keeps (tiles, row visits);
    /// null only for a result that failed to restore. Shared, immutable, thread-safe.
    std::shared_ptr<const AttentionWeights> weights;
    /// Per-row statistics the weights are recomputed from (docs/RESULT_FORMAT.md): `lse` [heads, n]
    /// for softmax rows, entmax's `tau`, the feature variants' `den`, ...
    std::map<std::string, PlainTensor> stats;
    /// Draws and variant diagnostics, named without the variant prefix.
    std::map<std::string, PlainTensor> diagnostics;
    /// Reason-only patterns beside the computed one, for the mask view (BigBird's element graph).
    std::map<std::string, std::shared_ptr<const AttentionWeights>> extraPatterns;
    /// Per (head, query): 0 = normal row, 1 = no admissible key (all-zero weights and output),
    /// 2 = padded query (zeroed, VARIANTS.md §1). U8 [heads, n]; empty when every row is normal.
    PlainTensor rowStatus;
    std::int64_t emptyRowCount = 0;
    Counters counters;

    /// Dense weight of (head, query, key): 0 outside the pattern (weights->weightAt).
    float weightAt(int head, std::int64_t query, std::int64_t key) const;
};

/// A model layer's own router: the logits of the tokens entering the layer's Switch FFN and the
/// capacity the model routes them with (RouterOptions' expertCapacity wins when > 0).
struct ModelRouting {
    PlainTensor logits;  ///< F32 [n, experts]
    /// Every layer's router logits (an empty tensor for a dense layer), for the layers × tokens view.
    std::vector<PlainTensor> layerLogits;
    double capacityFactor = 0;
    std::int64_t expertCapacity = 0;
    std::int64_t k = 1;          ///< choices per token (top-k when > 1)
    bool normalize = false;      ///< top-k gates renormalised (Mixtral)
    /// DeepSeek's routers (RouterOptions has the meaning): softmax or sigmoid scores, each layer's
    /// choice bias (empty where none), group-limited choice, routed_scaling_factor.
    std::string scoring = "softmax";
    std::vector<std::vector<float>> layerChoiceBias;
    std::int64_t expertGroups = 1, keptGroups = 1;
    std::string groupScore = "max";
    double gateScale = 1.0;
};

/// A rotary-position model layer's mean attention score by relative distance (RoPE's decay), per
/// head, with the model's rotation and with it removed (q and k before the rotation).
struct RotaryDistanceProfile {
    std::int64_t heads = 0, n = 0;
    /// [heads × n]: at δ, the mean of q_i·k_j/√d over the n − δ pairs with i − j = δ (the scores
    /// the layer's softmax takes, before the causal mask).
    std::vector<float> rotated;
    /// The same for q and k before the rotation: what the head scores with positions removed.
    std::vector<float> unrotated;
    double attentionFactor = 1.0;  ///< YaRN's scale on cos and sin, removed with the rotation
    /// Each head's queries and keys before the rotation, F32 [heads, n, headDim] (keys repeated per
    /// query head, YaRN's factor removed): the neuron view's "before rotation". Kept for texts of up
    /// to kRotaryVectorsMaxTokens tokens; empty beyond.
    std::int64_t headDim = 0;
    std::vector<float> unrotatedQ, unrotatedK;
    static constexpr std::int64_t kRotaryVectorsMaxTokens = 1024;
    float rotatedAt(std::int64_t head, std::int64_t distance) const {
        return rotated[static_cast<std::size_t>(head * n + distance)];
    }
    float unrotatedAt(std::int64_t head, std::int64_t distance) const {
        return unrotated[static_cast<std::size_t>(head * n + distance)];
    }
};

/// A multi-head latent attention layer (DeepSeek) made visible: how low the rank of all heads'
/// non-rotary keys is (they come from one latent), and how much of each head's score its rotary
/// and non-rotary parts carry.
struct LatentAttentionProfile {
    std::int64_t heads = 0, n = 0;
    std::int64_t nope = 0, rope = 0;  ///< each head's non-rotary and rotary key features
    std::int64_t latentRank = 0;      ///< kv_lora_rank: the latent every head's non-rotary key comes from
    /// Singular values, largest first, of the n × (heads · nope) matrix of every head's
    /// non-rotary keys: at most latentRank of them are non-zero.
    std::vector<float> keySingularValues;
    /// Per head, the mean over causal pairs j ≤ i of |q_nope·k_nope| and |q_rope·k_rope|.
    std::vector<float> nopeTerm, ropeTerm;
};

struct RunResult {
    TokenizedInput input;     ///< empty tokens when Q/K/V were given explicitly
    ProjectionSpec projection;
    std::string modelFolder;  ///< set when Q/K/V came from a checkpoint's layer
    int modelLayer = -1;
    /// The checkpoint's key/value heads (grouped-query attention: query head h reads
    /// h / (heads / modelKvHeads)); 0 when the heads share none.
    std::int64_t modelKvHeads = 0;
    /// The checkpoint layer's own sliding window (Mistral, Qwen2): its queries see keys
    /// i − W + 1 … i; 0 when the layer attends to every earlier key.
    std::int64_t modelWindow = 0;
    /// Set when that layer's FFN is a Switch layer (the Experts tab routes the model's own logits).
    std::optional<ModelRouting> modelRouting;
    /// Set when that layer has rotary positions (Llama family) and the text has at most 4,096 tokens.
    std::optional<RotaryDistanceProfile> rotaryProfile;
    /// Set when that layer attends through a latent (DeepSeek's MLA) and the text has at most 4,096 tokens.
    std::optional<LatentAttentionProfile> latentProfile;
    /// A vision model on a picture: every layer's own attention F32 [heads, n, n] (a few hundred
    /// patches), for the per-layer strip, rollout, flow and DINO's view (attnscope/vit_views.h).
    std::vector<PlainTensor> modelLayerAttention;
    std::int64_t n = 0, heads = 0, headDim = 0;
    /// The Q and K every variant ran on ([heads, n, d], [heads, m, d]), shared with the results'
    /// weights, and the key padding ([m], empty = none).
    SharedFloats q, k;
    std::vector<std::uint8_t> keyPadding;
    std::vector<AttentionResult> results;  ///< one per requested variant, in request order
    /// Index into `results` of the first exact softmax result (VariantInfo::exact) with the same
    /// shape as results[0]; -1 when the request had none.
    int exactReference = -1;
    /// Index into `results` of the model layer's own attention (ModelLayerSource::ownAttention):
    /// exactly what the layer's forward computed; -1 when the request did not ask for it. With a
    /// model, the reference every comparison is measured against (result_roles.h, referenceIndex).
    int ownAttention = -1;
    /// With a model: its family (ModelInfo::arch, "mistral") and the family's name ("Mistral").
    std::string modelFamily, modelFamilyName;
    /// With a model: how its weights are stored (ModelInfo::weightFormat, weightTypes): a GGUF
    /// file's quantized types say which model the figures are of.
    std::string modelWeightFormat;
    std::map<std::string, std::int64_t> modelWeightTypes;
    /// With the own attention: what it is in words ("causal softmax, sliding window of 4096 keys,
    /// rotary positions"), for captions and sidecars.
    std::string ownAttentionSummary;
    std::vector<std::string> warnings;     ///< non-fatal notices shown to the user
    std::string requestJson;               ///< the whole request, so anyone can recompute it
};

// ---- request ---------------------------------------------------------------------------------

struct VariantRequest {
    std::string id;
    ParamValues params;  ///< missing names take the schema default
    /// The seed of its random draws; unset: the projection's seed (RunRequest::projection).
    std::optional<std::uint64_t> seed = std::nullopt;
};

/// Q, K, V taken from one layer of a trained checkpoint run on `input` (its text, or its picture
/// for a vision model).
struct ModelLayerSource {
    std::string folder;  ///< a model folder (config.json + model.safetensors + tokenizer files)
    int layer = 0;
    /// The layer's own attention first (results[0], RunResult::ownAttention): exactly what its
    /// forward computed — window, bias, memory, causality (ModelInfo::layerAttention says how).
    /// The request's variants may then be empty.
    bool ownAttention = false;
    /// The model's vocabulary ids to run instead of tokenizing the text (a generated sequence:
    /// its ids are the ones the model wrote, which tokenizing the decoded text need not give back).
    std::vector<std::int64_t> ids;
    /// What the model reads (its tokenizer is the model's own: `input.tokenizer` is not used).
    InputSpec input;
};

/// Where a run's Q, K, V come from, exactly one of: a text or picture projected at random
/// (InputSpec, with RunRequest::projection), one layer of a model reading a text or picture
/// (ModelLayerSource), or explicit tensors, owned (QkvTensors) or read in place (SharedQkv).
using RunSource = std::variant<InputSpec, ModelLayerSource, QkvTensors, SharedQkv>;

struct RunRequest {
    RunSource source;  ///< an empty text until set
    ProjectionSpec projection;  ///< the random projections of a text or picture
    std::vector<VariantRequest> variants;
    std::vector<std::uint8_t> keyPadding;  ///< [m] 1 = padded key; empty = none padded
    /// Tensors variants read by name when given (VariantInfo::inputs: Transformer-XL's r_w_bias,
    /// r_r_bias, pos_keys), e.g. from a `--qkv` file; each variant checks the shapes it needs.
    std::map<std::string, PlainTensor> variantInputs;
    /// Diagnostics that need an n x m matrix (Performer's error against softmax, Linformer's
    /// spectrum) are built when n, m <= denseLimit; result files hold dense weights within it.
    std::int64_t denseLimit = 4096;
    /// Bytes this request may allocate (Q, K, V, results, scratch); 0 = the engine's default.
    std::uint64_t memoryBudgetBytes = 0;

    /// The text or picture read, a model's too; null for explicit tensors.
    const InputSpec* input() const {
        if (const auto* model = std::get_if<ModelLayerSource>(&source)) return &model->input;
        return std::get_if<InputSpec>(&source);
    }
    const ModelLayerSource* model() const { return std::get_if<ModelLayerSource>(&source); }
    ModelLayerSource* model() { return std::get_if<ModelLayerSource>(&source); }
    /// Explicit Q, K, V, owned or read in place.
    bool hasExplicitQkv() const {
        return std::holds_alternative<QkvTensors>(source) || std::holds_alternative<SharedQkv>(source);
    }
};

}  // namespace attnscope::engine
