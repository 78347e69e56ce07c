#pragma once
// exBERT's context search: a corpus run through the open model once (its tokens' hidden states,
// or one attention layer's keys or queries, at every layer), then, for a token of the text on
// screen, the corpus tokens whose vectors point the same way (cosine), each with its context and
// what it looked at itself. Plain C++: the index is built through a forward-pass callback (the
// engine's Engine::forwardModel in the app and the CLI, a hand-made pass in the tests).

#include <attnscope/model.h>
#include <attnscope/progress.h>
#include <attnscope/result.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope::engine {

/// What a token's vector is: the hidden state a layer writes (its output, as exBERT compares),
/// or that layer's attention keys or queries (all heads side by side; a head's slice is compared
/// when a head is given).
enum class ContextSpace { Hidden, Keys, Queries };
const char* contextSpaceName(ContextSpace space);  ///< "hidden", "keys", "queries"
std::optional<ContextSpace> parseContextSpace(const std::string& name);

/// A token of the corpus: its text, its bytes in the corpus ([begin, end); empty for the model's
/// special tokens, which are indexed for the attention summaries but never listed as matches).
struct ContextToken {
    std::string text;
    std::int64_t begin = 0, end = 0;
};

/// What a corpus token looked at in one layer and head: the corpus token it weighed most (-1 when
/// the pass kept no attention) and that weight.
struct ContextPeek {
    std::int32_t key = -1;
    float weight = 0.0f;
};

struct ContextIndex {
    /// The model the vectors come from (contextModelIdentity) and the corpus (its FNV-1a hash):
    /// a kept index is reused only when both match.
    std::string modelIdentity;
    std::uint64_t corpusHash = 0;
    std::string corpus;  ///< the corpus text (contexts are cut from it)
    ContextSpace space = ContextSpace::Hidden;
    std::int64_t layers = 0, heads = 0, headDim = 0;
    /// Floats per token and layer: hiddenSize for Hidden; (key or query heads) × headDim otherwise.
    std::int64_t width = 0;
    std::vector<ContextToken> tokens;
    std::vector<std::vector<float>> vectors;      ///< per layer: [tokens, width]
    std::vector<std::vector<ContextPeek>> peeks;  ///< per layer: [tokens, heads]
    /// Corpus bytes indexed: less than corpus.size() when the memory budget stopped the index.
    std::int64_t indexedBytes = 0;
    std::vector<std::string> notices;

    std::int64_t size() const { return static_cast<std::int64_t>(tokens.size()); }
    std::uint64_t bytes() const;
};

/// "folder|arch|weight bytes|layers": a kept index names the model it was built with.
std::string contextModelIdentity(const ModelInfo& model);
std::uint64_t contextCorpusHash(const std::string& corpus);

using ContextForwardFn = std::function<Result<std::shared_ptr<const ModelForward>>(const ModelInput& input)>;

struct ContextIndexOptions {
    ContextSpace space = ContextSpace::Hidden;
    /// Whose vectors they are (a kept index is reused only for the same); empty:
    /// contextModelIdentity(model). Random projections name their settings here.
    std::string identity;
    /// The index stops (with a notice) before its vectors and summaries pass this many bytes.
    std::uint64_t memoryBudgetBytes = 256ull << 20;
};

/// Runs `corpus` through `forward` piece by piece (lines, cut at spaces so no piece outgrows the
/// model's positions) and keeps every token's vectors and per-head strongest key. Errors:
/// InvalidArgument (empty corpus, a model with no layers), InvalidInput (not UTF-8), Cancelled
/// (between pieces, through `progress`), and whatever a pass returns.
Result<std::shared_ptr<const ContextIndex>> buildContextIndex(const std::string& corpus, const ModelInfo& model,
                                                              const ContextIndexOptions& options,
                                                              const ContextForwardFn& forward,
                                                              const ProgressFn& progress = {});

/// A run's Q and K as a one-layer pass (random projections, which have no model): queries and keys
/// per head, no hidden states, and its first result's weights [heads, n, n] when `keepAttention`
/// (the context index runs `full` on each corpus piece: exact softmax of those Q and K).
std::shared_ptr<const ModelForward> passOfRun(const RunResult& run, bool keepAttention);

/// "random projections|…": the settings that make a random-projection run's vectors (the
/// tokenizer, heads, sizes, seed, q/k norm), the identity its index is kept under.
std::string contextProjectionIdentity(const RunResult& run);

/// Token `token`'s keys or queries of every head of a run, side by side (what passOfRun's index
/// holds), read in place. Errors: InvalidArgument (hidden states, which a run does not keep; a token
/// outside the run), InvalidInput (a run that kept no Q and K).
Result<std::vector<float>> contextVectorOfRun(const RunResult& run, ContextSpace space, std::int64_t token);

/// The vector of token `token` of a pass at `layer` in `space` (what the index holds per token).
Result<std::vector<float>> contextVector(const ModelForward& pass, ContextSpace space, std::int64_t layer,
                                         std::int64_t token);

struct ContextMatch {
    std::int64_t token = 0;  ///< index into ContextIndex::tokens
    double cosine = 0.0;
    std::string before, text, after;  ///< the corpus around the token (one line at most)
    ContextPeek peek;                 ///< at the searched layer and head (head 0 when none given)
    std::string peekText;             ///< the key it looked at, "" when none kept
};

struct ContextQuery {
    std::int64_t layer = 0;
    /// Keys and queries: compare head `head`'s slice alone; Hidden ignores it (but the peek is
    /// that head's).
    std::optional<std::int64_t> head;
    std::int64_t top = 10;
    std::int64_t contextBytes = 40;  ///< corpus bytes shown on each side, cut at a line break
};

/// The `query.top` corpus tokens nearest `vector` by cosine, highest first (ties: corpus order).
/// Errors: InvalidArgument (layer or head out of range, a vector of another width, a zero vector).
Result<std::vector<ContextMatch>> searchContext(const ContextIndex& index, const std::vector<float>& vector,
                                                const ContextQuery& query);

/// Where an index of this model and corpus is kept: beside the model (a folder
/// "attnscope-context" in a model folder, or "<file>.attnscope-context" beside a model file), then
/// in the user's cache folder (a folder per identity) when the model's folder cannot be written or
/// there is none (random projections).
std::vector<std::string> contextIndexPaths(const std::string& modelFolder, const std::string& identity,
                                           std::uint64_t corpusHash, ContextSpace space);
/// Writes an index (safetensors, written atomically; creates the folder).
Result<void> saveContextIndex(const ContextIndex& index, const std::string& path);
/// Reads a kept index; NotFound when there is none, InvalidInput when it is damaged.
Result<std::shared_ptr<const ContextIndex>> loadContextIndex(const std::string& path);

/// Where an index came from, for the status line.
struct KeptContextIndex {
    std::shared_ptr<const ContextIndex> index;
    std::string path;     ///< where it is kept ("" when it could be kept nowhere)
    bool reused = false;  ///< read back instead of built
    std::vector<std::string> notices;  ///< a damaged kept index rebuilt, a folder that refused it
};

/// The index of `corpus` for the open model: the kept one when one of contextIndexPaths holds it
/// for this model, corpus and space (and `rebuild` is false), else built and kept at the first
/// path that takes it. A kept index of another model is rebuilt.
Result<KeptContextIndex> keptOrBuiltContextIndex(const std::string& corpus, const ModelInfo& model,
                                                 const ContextIndexOptions& options, const ContextForwardFn& forward,
                                                 const ProgressFn& progress = {}, bool rebuild = false);

}  // namespace attnscope::engine
