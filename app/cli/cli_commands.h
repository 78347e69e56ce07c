#pragma once
// Sub-commands of attnscope-cli. Each returns the process exit status.

#include <attnscope/image_input.h>
#include <attnscope/moe_router.h>
#include <attnscope/result.h>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope::engine {
class Engine;
}

namespace attnscope::cli {

struct RunOptions {
    std::string variant;
    std::vector<std::string> params;  ///< NAME=VALUE
    std::string text, textFile, qkvFile;
    std::string model;  ///< model folder: Q/K/V come from layer `layer` of this checkpoint
    std::string attention;  ///< captured-attention file: Q/K/V come from its layer `layer`
    int layer = 0;
    std::string image;                   ///< an image file as the input (docs/IMAGES.md)
    std::string imageTokens = "pixels";  ///< pixels | patches
    std::string imageGrid = "32x32";     ///< pixels mode: ROWSxCOLS
    int patch = 16;                      ///< patches mode: P
    std::string patchFit = "crop";       ///< crop | pad
    bool cls = false;                    ///< patches mode: a CLS token first
    std::string tokenizer = "words";
    int heads = 4;
    int headDim = 32;
    int modelDim = 0;
    std::uint64_t seed = 0;
    double qkNorm = 0;  ///< > 0: query and key rows rescaled to this norm (ProjectionSpec::qkNorm)
    bool causal = false;
    std::uint64_t memoryBudget = 0;
    std::int64_t denseLimit = 4096;
    int threads = 0;
    std::string out;
    std::string summary;
    bool writePattern = false;  ///< also list the pattern (pattern.row_ptr / col_idx / reason)
    bool quiet = false;
};

struct AnalyzeOptions {
    std::string model;
    std::string text, textFile;
    std::vector<std::string> coverage;  ///< VARIANT[:NAME=VALUE,...]; empty = the default settings
    std::string image;                  ///< a picture for a vision model (ViT, DeiT, DINO) instead of text
    std::string headFusion = "mean";    ///< rollout: mean | max | min
    double discardRatio = 0.9;          ///< rollout: share of the smallest fused weights dropped per layer
    double massShare = 0.6;             ///< DINO's view: the share of the [CLS] attention kept
    bool noFlow = false;                ///< skip attention flow (n max-flow problems)
    int threads = 0;
    std::uint64_t memoryBudget = 0;  ///< 0: 40 % of physical memory
    std::string out;
    bool quiet = false;
};

struct TrainCliOptions {
    std::string arch = "roberta";
    std::int64_t segment = 32, memory = -1;  ///< transfo-xl (-1: memory = segment)
    bool noRelay = false;                    ///< star-transformer: the ablation
    std::int64_t experts = 8;                ///< switch: experts per FFN layer
    double capacityFactor = 1.25, auxLossCoef = 0.01, zLossCoef = 0.0;  ///< switch
    std::string task = "copy";
    std::string textFile;
    std::string variant;  ///< empty: the exact reference
    std::vector<std::string> params;
    int layers = 2, heads = 4, dim = 64;
    std::int64_t steps = 1000, batch = 32, length = 0;
    double learningRate = 3e-3;
    std::uint64_t seed = 0;
    int threads = 0;
    std::uint64_t memoryBudget = 0;  ///< 0: 40 % of physical memory
    std::string out;
    bool quiet = false;
};

struct GenerateOptions {
    std::string model;                  ///< a model folder or a GGUF file
    std::string prompt, promptFile;
    std::int64_t maxNewTokens = 32;
    double temperature = 0;             ///< 0: greedy
    std::int64_t topK = 0;
    std::uint64_t seed = 0;
    int layer = 0;                      ///< the layer --out holds (every layer is written beside it)
    int threads = 0;
    std::uint64_t memoryBudget = 0;
    std::string out, summary;
    bool quiet = false;
    bool promptGiven = false;
};

struct RouteOptions {
    std::string input;     ///< safetensors: hidden [n, d] + router [E, d], or router_logits [n, E]
    std::string text, textFile;
    std::string tokenizer = "words";
    std::int64_t experts = 8, dim = 64;  ///< for text: a seeded router over d-dimensional token states
    std::uint64_t seed = 0;
    std::string policy = "switch", priority = "sequence", droppedAs = "paper";
    std::int64_t k = 0, expertCapacity = 0, groupSize = 0;
    double capacityFactor = 1.25;
    bool normalize = false;
    std::uint64_t memoryBudget = 0;  ///< 0: 40 % of physical memory
    std::string out, summary, csv;
    bool textGiven = false;
    /// A mixture-of-experts model folder (`train --arch switch`): the text's tokens routed by the
    /// router of `layer`, with the model's own capacity unless --capacity-factor or
    /// --expert-capacity is given (`capacityGiven`).
    std::string model;
    int layer = 0;
    bool capacityGiven = false;
    bool policyGiven = false;  ///< --policy, --k or --normalize given: else the model's router's
};

struct StarOptions {
    std::string text, textFile;
    std::string model;  ///< a star-transformer folder; empty: random weights from the seed
    std::string tokenizer = "words";
    int heads = 4, headDim = 32;
    std::uint64_t seed = 0;
    std::vector<std::string> params;  ///< cycles=T, cyclic=true|false (the random model)
    int threads = 0;
    std::uint64_t memoryBudget = 0;  ///< 0: 40 % of physical memory
    std::string out;
    bool quiet = false;
    bool textGiven = false;
};

struct VariantsOptions {
    bool json = false;
};

struct SweepOptions {
    std::string variants;  ///< "ID[:p=v,...],..." (list values with ';')
    std::string sizes;     ///< "1024,2048,..."
    std::int64_t heads = 8, headDim = 64;
    std::uint64_t seed = 0;
    int threads = 0;
    std::uint64_t memoryBudget = 0;
    std::string out = "sweep.csv";
    std::string markdown;  ///< empty: the table goes to stdout
    bool quiet = false;
};

struct TileOptions {
    std::string file;
    int head = 0;
    std::string rows, keys;     ///< "A:B" (B exclusive) or "A"; empty = all
    std::string format = "json";  ///< json | csv
};

struct NeuronOptions {
    std::string file;
    int result = 0;  ///< which of the file's results
    int head = 0;
    std::int64_t query = 0;
    std::string keys;  ///< "C:D" (D exclusive) or "C"; empty = all
    /// Instead of a file: the model's own attention of `layer` on the text (LibTorch).
    std::string model, text, textFile;
    int layer = 0;
    bool textGiven = false;
    int threads = 0;
};

struct ContextOptions {
    std::string model;
    std::string corpus;           ///< the corpus text file
    std::string text, textFile;   ///< the text whose token is searched for
    bool textGiven = false;
    std::int64_t token = 0;
    int layer = 0;
    std::string space = "hidden";  ///< hidden | keys | queries
    int head = -1;                 ///< keys and queries: one head's slice; -1: all heads
    std::int64_t top = 10;
    std::int64_t contextBytes = 40;
    bool rebuild = false;
    std::uint64_t indexBudget = 256ull << 20;
    int threads = 0;
    std::uint64_t memoryBudget = 0;
    bool quiet = false;
};

struct QkMapCliOptions {
    std::string file;
    int result = 0;
    int head = 0;
    std::string method = "pca";  ///< pca | tsne
    double perplexity = 30;       ///< t-SNE
    std::uint64_t seed = 0;       ///< t-SNE's starting layout, UMAP's sampling
    int neighbors = 15;           ///< UMAP's n_neighbors
    double minDist = 0.1;         ///< UMAP's min_dist
    bool noTranslate = false, noScale = false;
    std::string out;
};

/// "A:B" (B exclusive), or "A" for one index; empty = the whole range [0, size). False when the
/// text is neither (the range itself is checked by the caller).
bool parseIndexRange(const std::string& text, std::int64_t size, std::int64_t& a, std::int64_t& b);

int runCommand(const RunOptions& options);
int variantsCommand(const VariantsOptions& options);
int analyzeCommand(const AnalyzeOptions& options);
int trainCommand(const TrainCliOptions& options);
int tileCommand(const TileOptions& options);
/// attnscope-cli neuron (cli_neuron.cpp): the neuron view's terms of one query as JSON.
int neuronCommand(const NeuronOptions& options);
/// The neuron JSON of result `options.result` of `run` on stdout (the file's and the model's path).
int printNeuronTerms(const engine::RunResult& run, const NeuronOptions& options);
/// neuron --model (cli_neuron_model.cpp, LibTorch): the model layer's own attention on the text.
int neuronModelCommand(const NeuronOptions& options);
/// attnscope-cli context (cli_context.cpp, LibTorch): exBERT's context search as JSON.
int contextCommand(const ContextOptions& options);
/// attnscope-cli qkmap (cli_qkmap.cpp): the query–key map of one head as CSV.
int qkmapCommand(const QkMapCliOptions& options);
int sweepCommand(const SweepOptions& options);
/// attnscope-cli route (cli_route.cpp): MoE routing of hidden states, written as safetensors.
int routeCommand(const RouteOptions& options);
/// route --model (cli_route_model.cpp, LibTorch): the router of a model's layer on its tokens.
int routeModelCommand(const RouteOptions& options);
/// kExitFailure (printed) when --out, --summary or --csv cannot be written; else 0.
int checkRouteOutputs(const RouteOptions& options);
/// The router options the flags give.
engine::RouterOptions routerOptionsOf(const RouteOptions& options);
/// Routes `logits` and writes --out, --summary and --csv (all or none); `tokens` (may be null)
/// name the CSV's rows. Returns the exit status.
int routeAndWrite(const RouteOptions& options, const engine::PlainTensor& logits, const engine::RouterOptions& router,
                  const engine::TokenizedInput* tokens);
/// attnscope-cli generate (cli_generate.cpp): text from a model, with its attention of the whole sequence.
int generateCommand(const GenerateOptions& options);
/// attnscope-cli star (cli_star.cpp): the Star-Transformer's cycles, written as safetensors.
int starCommand(const StarOptions& options);

/// The whole file as bytes; an Io error naming the path when it cannot be read.
engine::Result<std::string> readTextFile(const std::string& path);
/// `run --image` and its settings as the request's image input (cli_image.cpp; decodes with Qt).
engine::Result<engine::ImageSpec> imageSpecFromOptions(const RunOptions& options);
/// The picture at `path` with its file name, settings left at their defaults (a vision model's
/// preprocessor decides the grid).
engine::Result<engine::ImageSpec> pictureSpec(const std::string& path);

/// The engine with `threads` LibTorch threads; on failure prints the error and returns nothing.
std::optional<std::unique_ptr<engine::Engine>> createEngine(int threads, std::uint64_t memoryBudget);

/// Prints "attnscope-cli: error: MESSAGE" on one line of stderr.
void printError(const std::string& message);

/// Exit statuses: 0 ok, 1 run failed (input, budget, I/O), 2 usage (flags, parameters), 130 cancelled.
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

}  // namespace attnscope::cli
