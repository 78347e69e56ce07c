#include "cli/cli_app.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <string>

namespace attnscope::cli {

void printError(const std::string& message) {
    std::string line = message;
    for (auto& c : line)
        if (c == '\n') c = ' ';
    std::cerr << "attnscope-cli: error: " << line << std::endl;
}

namespace {

// Whole decimal numbers that fit 64 bits (CLI11 would saturate or wrap "1e30", "-1" and
// "1000000000000000000000000000000" into some other seed or budget).
std::string checkUnsigned64(const std::string& text, std::uint64_t least, const char* what) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto parsed = std::from_chars(text.data(), end, value);
    if (text.empty() || parsed.ec != std::errc() || parsed.ptr != end)
        return std::string(what) + " must be a whole number from " + std::to_string(least) + " to 18446744073709551615, got '" + text + "'";
    if (value < least) return std::string(what) + " must be at least " + std::to_string(least) + ", got " + text;
    return {};
}

const CLI::Validator kSeed([](std::string& text) { return checkUnsigned64(text, 0, "the seed"); }, "0..2^64-1");
const CLI::Validator kBytes([](std::string& text) { return checkUnsigned64(text, 1, "the memory budget (bytes)"); },
                            "BYTES >= 1");

std::string rangeText(double lo, double hi) {
    char text[64];
    std::snprintf(text, sizeof text, "[%g, %g]", lo, hi);
    return text;
}

// A number flag: finite (NaN compares false with every bound, so a plain range let it through)
// and within [lo, hi].
CLI::Validator finiteRange(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            double value = 0;
            try {
                std::size_t used = 0;
                value = std::stod(text, &used);
                if (used != text.size()) return "'" + text + "' is not a number";
            } catch (const std::exception&) {
                return "'" + text + "' is not a number";
            }
            if (!std::isfinite(value)) return "'" + text + "' is not a finite number";
            if (value < lo || value > hi) return "'" + text + "' is outside " + rangeText(lo, hi);
            return {};
        },
        "NUMBER in " + rangeText(lo, hi));
}

}  // namespace

CliParse::CliParse() {
    app.require_subcommand(1);
    app.set_version_flag("--version", "attnscope-cli 0.1.0");
    addVariantsCommand();
    addRunCommand();
    addAnalyzeCommand();
    addTileCommand();
    addNeuronCommand();
    addQkMapCommand();
    addSweepCommand();
    addTrainCommand();
    addRouteCommand();
    addStarCommand();
    addGenerateCommand();
    addContextCommand();
}

void CliParse::addVariantsCommand() {
    m_variants = app.add_subcommand("variants", "List variants and their parameter schemas.");
    m_variants->add_flag("--json", this->variants.json, "Print the list as JSON.");
}

void CliParse::addRunCommand() {
    m_run = app.add_subcommand("run", "Run one variant and write RESULT.safetensors.");
    m_run->add_option("--variant", run.variant,
                      "Variant id (see 'attnscope-cli variants'). Without it, --model DIR --layer L writes the model's own "
                      "attention of that layer: exactly what its forward computes (window, bias, memory, causality).");
    m_run->add_option("--param", run.params, "Variant parameter NAME=VALUE (repeatable).");
    m_runText = m_run->add_option("--text", run.text, "Input text.");
    auto* textFile = m_run->add_option("--text-file", run.textFile, "Read the input text from a file.");
    auto* qkv = m_run->add_option("--qkv", run.qkvFile,
                                   "safetensors file with float32 q, k, v [H, n, d] (skips tokenizing).");
    auto* model = m_run->add_option("--model", run.model,
                                     "Model folder (config.json + model.safetensors + tokenizer): the model's own "
                                     "attention of --layer for the text, or with --variant that variant on the layer's Q/K/V.");
    auto* attention = m_run->add_option("--attention", run.attention,
                                         "safetensors file of attention captured from any model (q, k, v [layers, heads, n, d] "
                                         "and/or attentions, tokens in its metadata; docs/CAPTURED_ATTENTION.md): run the "
                                         "variant on --layer's q, k, v.");
    m_run->add_option("--layer", run.layer, "Layer of --model or --attention whose Q/K/V are used (from 0).")
        ->check(CLI::Range(0, 999));  // (needs one of the two: checked after parsing)
    auto* image = m_run->add_option("--image", run.image,
                                     "An image (PNG, JPEG, BMP, GIF, ...) as the input: its pixels or patches are the tokens.");
    m_run->add_option("--image-tokens", run.imageTokens, "pixels (the image resized to --image-grid) | patches (--patch)")
        ->check(CLI::IsMember({"pixels", "patches"}));
    m_run->add_option("--image-grid", run.imageGrid, "ROWSxCOLS: the grid pixels mode resizes the image to (default 32x32).");
    m_run->add_option("--patch", run.patch, "Patch side P in pixels (patches mode).")->check(CLI::Range(1, 4096));
    m_run->add_option("--patch-fit", run.patchFit, "crop | pad: the remainder when P does not divide the image.")
        ->check(CLI::IsMember({"crop", "pad"}));
    m_run->add_flag("--cls", run.cls, "patches mode: a CLS token before the patches.");
    image->excludes(m_runText)->excludes(textFile)->excludes(qkv)->excludes(attention);
    m_runText->excludes(textFile)->excludes(qkv)->excludes(attention);
    textFile->excludes(qkv)->excludes(attention);
    model->excludes(qkv)->excludes(attention);
    qkv->excludes(attention);
    m_run->add_option("--tokenizer", run.tokenizer, "bytes | chars | words")
        ->check(CLI::IsMember({"bytes", "chars", "words"}));
    m_run->add_option("--heads", run.heads, "Heads of the random projections.")->check(CLI::Range(1, 256));
    m_run->add_option("--head-dim", run.headDim, "Head dimension d.")->check(CLI::Range(1, 1024));
    m_run->add_option("--model-dim", run.modelDim, "Model dimension (0 = heads x head dim).")
        ->check(CLI::Range(0, 65536));
    m_run->add_option("--seed", run.seed, "Seed of every random draw.")->check(kSeed);
    m_run->add_option("--qk-norm", run.qkNorm,
                      "Rescale every query and key row to this norm before the variants run (e.g. d^(1/4), where "
                      "Performer's estimate converges); 0 = as computed.")
        ->check(CLI::Range(0.0, 1e6));
    m_run->add_flag("--causal", run.causal, "Causal attention (sets the variant's 'causal' parameter).");
    m_run->add_option("--memory-budget", run.memoryBudget,
                      "Bytes the run may allocate: inputs, results, scratch (default 40 % of memory).")
        ->check(kBytes);
    m_run->add_option("--dense-limit", run.denseLimit, "Write dense weights and mask up to this many tokens.")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
    m_run->add_option("--threads", run.threads, "LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    m_run->add_option("--out", run.out, "RESULT.safetensors to write.")->required();
    m_run->add_option("--summary", run.summary, "Also write a SUMMARY.json.");
    m_run->add_flag("--write-pattern", run.writePattern,
                     "Also list every (query, key) entry of the pattern with its reason (refused over the memory budget).");
    m_run->add_flag("--quiet", run.quiet, "No progress on stderr.");
}

void CliParse::addAnalyzeCommand() {
    m_analyze = app.add_subcommand("analyze", "Head atlas of a checkpoint: per-head metrics and pattern coverage.");
    auto* analyzeModel = m_analyze->add_option("--model", analyze.model, "Model folder (config.json + model.safetensors + tokenizer).");
    auto* analyzeAttention = m_analyze->add_option(
        "--attention", analyze.model,
        "safetensors file of attention captured from any model (attentions and/or q, k, v; docs/CAPTURED_ATTENTION.md), "
        "analysed on its own tokens.");
    analyzeModel->excludes(analyzeAttention);
    m_analyzeText = m_analyze->add_option("--text", analyze.text, "Input text.");
    auto* analyzeTextFile = m_analyze->add_option("--text-file", analyze.textFile, "Read the input text from a file.");
    m_analyzeText->excludes(analyzeTextFile);
    auto* analyzeImage = m_analyze->add_option(
        "--image", analyze.image,
        "A picture for a vision model (ViT, DeiT, DINO), prepared by its preprocessor_config.json: the atlas adds each "
        "layer's [CLS] attention, rollout, flow and DINO's view over the picture.");
    analyzeImage->excludes(m_analyzeText)->excludes(analyzeTextFile)->excludes(analyzeAttention);
    m_analyze->add_option("--head-fusion", analyze.headFusion, "Rollout's head fusion: mean | max | min (default mean).")
        ->check(CLI::IsMember({"mean", "max", "min"}));
    m_analyze->add_option("--discard-ratio", analyze.discardRatio,
                          "Rollout: the share of each layer's smallest fused weights set to 0 (default 0.9).")
        ->check(finiteRange(0.0, 0.999));
    m_analyze->add_option("--mass-share", analyze.massShare,
                          "DINO's view: the share of the [CLS] attention the shown patches hold (default 0.6).")
        ->check(finiteRange(0.001, 1.0));
    m_analyze->add_flag("--no-flow", analyze.noFlow, "Skip attention flow (one max-flow problem per token).");
    m_analyze->add_option("--coverage", analyze.coverage,
                           "Coverage setting VARIANT[:NAME=VALUE,...] (repeatable; default: the catalog's settings, fitted to the input's length).");
    m_analyze->add_option("--threads", analyze.threads, "LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    m_analyze->add_option("--memory-budget", analyze.memoryBudget,
                          "Bytes the forward pass and the atlas may allocate (default 40 % of memory).")
        ->check(kBytes);
    m_analyze->add_option("--out", analyze.out, "ATLAS.json to write.")->required();
    m_analyze->add_flag("--quiet", analyze.quiet, "No progress on stderr.");
}

void CliParse::addTileCommand() {
    m_tile = app.add_subcommand("tile", "Print a rectangle of one head's exact weights from a result file.");
    m_tile->add_option("file", tile.file, "RESULT.safetensors written by 'run'.")->required();
    m_tile->add_option("--head", tile.head, "Head (from 0).")->check(CLI::Range(0, 1 << 20));
    m_tile->add_option("--rows", tile.rows, "Queries A:B (B exclusive), or A; default all.");
    m_tile->add_option("--keys", tile.keys, "Keys C:D (D exclusive), or C; default all.");
    m_tile->add_option("--format", tile.format, "json (weights and reasons) | csv (weights)")
        ->check(CLI::IsMember({"json", "csv"}));
}

void CliParse::addNeuronCommand() {
    m_neuron = app.add_subcommand("neuron", "Print the neuron view of one query as JSON: q, each k, q*k per dimension, "
                                            "the score's terms and the weight, from a result file or a model layer.");
    auto* file = m_neuron->add_option("file", neuron.file, "RESULT.safetensors written by 'run'.");
    auto* model = m_neuron->add_option("--model", neuron.model, "Instead of a file: a model folder or GGUF file; its layer "
                                                                "--layer's own attention on --text.");
    model->excludes(file);
    m_neuronText = m_neuron->add_option("--text", neuron.text, "With --model: the input text.");
    m_neuron->add_option("--text-file", neuron.textFile, "With --model: read the input text from a file.")->excludes(m_neuronText);
    m_neuron->add_option("--layer", neuron.layer, "With --model: the layer (from 0).")->check(CLI::Range(0, 4096));
    m_neuron->add_option("--threads", neuron.threads, "With --model: LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    m_neuron->add_option("--result", neuron.result, "Which of the file's results (from 0; default 0).")->check(CLI::Range(0, 1 << 20));
    m_neuron->add_option("--head", neuron.head, "Head (from 0).")->check(CLI::Range(0, 1 << 20));
    m_neuron->add_option("--query", neuron.query, "Query token (from 0).")->required()->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
    m_neuron->add_option("--keys", neuron.keys, "Keys C:D (D exclusive), or C; default all (at most 65,536).");
}

void CliParse::addQkMapCommand() {
    m_qkmap = app.add_subcommand("qkmap", "Write one head's query-key map (AttentionViz) as CSV: every query and key "
                                          "placed in one plane, from a result file.");
    m_qkmap->add_option("file", qkmap.file, "RESULT.safetensors written by 'run'.")->required();
    m_qkmap->add_option("--result", qkmap.result, "Which of the file's results (from 0; default 0).")->check(CLI::Range(0, 1 << 20));
    m_qkmap->add_option("--head", qkmap.head, "Head (from 0).")->check(CLI::Range(0, 1 << 20));
    m_qkmap->add_option("--method", qkmap.method, "pca (default) | tsne (exact t-SNE) | umap (UMAP, umap-learn's defaults); "
                                                  "t-SNE and UMAP place at most 4096 points.");
    m_qkmap->add_option("--perplexity", qkmap.perplexity, "t-SNE: neighbours each point counts (default 30).")->check(CLI::Range(1.0, 1000.0));
    m_qkmap->add_option("--seed", qkmap.seed, "t-SNE and UMAP: the seed of their draws (default 0).");
    m_qkmap->add_option("--neighbors", qkmap.neighbors, "UMAP: n_neighbors, the point itself included (default 15).")
        ->check(CLI::Range(2, 200));
    m_qkmap->add_option("--min-dist", qkmap.minDist, "UMAP: min_dist (default 0.1).")->check(CLI::Range(0.0, 1.0));
    m_qkmap->add_flag("--no-translate", qkmap.noTranslate, "Keep the keys where they are (default: their mean moved to the queries').");
    m_qkmap->add_flag("--no-scale", qkmap.noScale, "Keep the norms (default: queries and keys rescaled to equal mean norms).");
    m_qkmap->add_option("--out", qkmap.out, "MAP.csv to write: kind,index,token,x,y.")->required();
}

void CliParse::addSweepCommand() {
    m_sweep = app.add_subcommand("sweep", "Time each variant at each length in a fresh process: CSV + Markdown table vs full.");
    m_sweep->add_option("--variants", sweep.variants, "ID[:NAME=VALUE,...],... (list values with ';', e.g. global=0;7)")->required();
    m_sweep->add_option("--n", sweep.sizes, "Token counts, e.g. 1024,2048,4096.")->required();
    m_sweep->add_option("--heads", sweep.heads, "Heads of the random Q, K, V.")->check(CLI::Range(1, 256));
    m_sweep->add_option("--head-dim", sweep.headDim, "Head dimension d.")->check(CLI::Range(1, 1024));
    m_sweep->add_option("--seed", sweep.seed, "Seed of the random Q, K, V.")->check(kSeed);
    m_sweep->add_option("--threads", sweep.threads, "Threads of each run (0 = all cores).")->check(CLI::Range(0, 1024));
    m_sweep->add_option("--memory-budget", sweep.memoryBudget, "Bytes each run may allocate (larger sizes are skipped).")
        ->check(kBytes);
    m_sweep->add_option("--out", sweep.out, "CSV to write.");
    m_sweep->add_option("--markdown", sweep.markdown, "Markdown table to write (default: stdout).");
    m_sweep->add_flag("--quiet", sweep.quiet, "No progress on stderr.");
}

void CliParse::addTrainCommand() {
    m_train = app.add_subcommand("train", "Train a small model with a chosen attention variant (CPU).");
    m_train->add_option("--arch", train.arch,
                        "roberta (a bidirectional encoder, every task) | switch (the same encoder with Switch FFN "
                        "layers: --experts behind a top-1 router) | transfo-xl (a Transformer-XL language model "
                        "on --text-file, with segment memory) | star-transformer (fastNLP's encoder, task first; "
                        "--layers = its cycles)")
        ->check(CLI::IsMember({"roberta", "switch", "transfo-xl", "star-transformer"}));
    m_train->add_option("--experts", train.experts, "switch: experts per FFN layer.")->check(CLI::Range(1, 64));
    m_train->add_option("--capacity-factor", train.capacityFactor,
                        "switch: expert capacity = ceil(tokens / experts x factor) per sequence; 0 = no capacity.")
        ->check(finiteRange(0.0, 1e6));
    m_train->add_option("--aux-loss", train.auxLossCoef, "switch: weight of the load-balancing loss (the paper: 0.01).")
        ->check(finiteRange(0.0, 1e6));
    m_train->add_option("--z-loss", train.zLossCoef, "switch: weight of the router z-loss (0 = off; ST-MoE: 0.001).")
        ->check(finiteRange(0.0, 1e6));
    m_train->add_flag("--no-relay", train.noRelay, "star-transformer: the ablation without the relay, for comparison.");
    m_train->add_option("--segment", train.segment, "transfo-xl: segment length L (tgt_len).")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
    m_train->add_option("--memory", train.memory, "transfo-xl: memory length M (mem_len; default: the segment).")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{16384}));
    m_train->add_option("--task", train.task, "copy | reverse | duplicate | text | first (star-transformer: tag every position "
                                              "with the first letter)")
        ->check(CLI::IsMember({"copy", "reverse", "duplicate", "text", "first"}));
    m_train->add_option("--text-file", train.textFile, "Training text for --task text.");
    m_train->add_option("--variant", train.variant, "Attention variant of every layer (default: exact softmax).");
    m_train->add_option("--param", train.params, "Variant parameter NAME=VALUE (repeatable).");
    m_train->add_option("--layers", train.layers, "Layers.")->check(CLI::Range(1, 48));
    m_train->add_option("--heads", train.heads, "Heads per layer.")->check(CLI::Range(1, 64));
    m_train->add_option("--dim", train.dim, "Model dimension (a multiple of --heads).")->check(CLI::Range(1, 1024));
    m_train->add_option("--steps", train.steps, "Optimisation steps.")->check(CLI::Range(std::int64_t{1}, std::int64_t{10000000}));
    m_train->add_option("--batch", train.batch, "Examples per step.")->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
    m_train->add_option("--length", train.length, "Symbols per example (0 = 8 for tasks, 48 bytes for text).")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1024}));
    m_train->add_option("--lr", train.learningRate, "Peak learning rate (Adam).")->check(finiteRange(1e-9, 10.0));
    m_train->add_option("--seed", train.seed, "Seed of the data, the initial weights and the variant's draws.")
        ->check(kSeed);
    m_train->add_option("--threads", train.threads, "LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    m_train->add_option("--memory-budget", train.memoryBudget,
                        "Bytes training may allocate: weights, optimiser state, a batch's activations (default 40 % of memory).")
        ->check(kBytes);
    m_train->add_option("--out", train.out, "Model folder to write.")->required();
    m_train->add_flag("--quiet", train.quiet, "No progress on stderr.");
}

void CliParse::addRouteCommand() {
    m_route = app.add_subcommand("route", "Mixture-of-experts routing: experts, slots, capacity drops and balancing losses.");
    auto* routeInput = m_route->add_option("--input", route.input,
                                           "safetensors with hidden [n, d] and router [E, d], or router_logits [n, E].");
    m_routeText = m_route->add_option("--text", route.text, "Input text (a seeded router over its token states).");
    auto* routeTextFile = m_route->add_option("--text-file", route.textFile, "Read the input text from a file.");
    routeInput->excludes(m_routeText)->excludes(routeTextFile);
    m_routeText->excludes(routeTextFile);
    auto* routeModel = m_route->add_option("--model", route.model,
                                           "A mixture-of-experts model folder (train --arch switch): route its tokens "
                                           "at --layer with its own router and capacity.");
    routeModel->excludes(routeInput);
    m_route->add_option("--layer", route.layer, "The model's layer whose router routes (with --model).")
        ->check(CLI::Range(0, 1000));
    m_route->add_option("--tokenizer", route.tokenizer, "bytes | chars | words")->check(CLI::IsMember({"bytes", "chars", "words"}));
    m_route->add_option("--experts", route.experts, "Experts E of the seeded router (text input).")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
    m_route->add_option("--dim", route.dim, "Width d of the token states (text input).")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{65536}));
    m_route->add_option("--seed", route.seed, "Seed of the token states and the router (text input).")->check(kSeed);
    m_route->add_option("--policy", route.policy, "switch (top-1, the paper) | topk")->check(CLI::IsMember({"switch", "topk"}));
    m_route->add_option("--k", route.k, "Choices per token (default 1 for switch, 2 for topk).")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
    m_route->add_flag("--normalize", route.normalize, "Renormalise the top-k gates to sum 1 (Mixtral).");
    m_route->add_option("--capacity-factor", route.capacityFactor, "Capacity factor (0: no capacity, dropless).")
        ->check(finiteRange(0.0, 1e6));
    m_route->add_option("--expert-capacity", route.expertCapacity, "Slots per expert and group (overrides the factor).")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
    m_route->add_option("--group-size", route.groupSize, "Tokens per group (0: the whole sequence).")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
    m_route->add_option("--priority", route.priority, "sequence | gate (batch-priority routing)")
        ->check(CLI::IsMember({"sequence", "gate"}));
    m_route->add_option("--dropped-as", route.droppedAs,
                        "The balancing loss counts a dropped choice as its expert (paper) or as expert 0 (expert0, as HF).")
        ->check(CLI::IsMember({"paper", "expert0"}));
    m_route->add_option("--memory-budget", route.memoryBudget, "Bytes the routing may allocate (default 40 % of memory).")
        ->check(kBytes);
    m_route->add_option("--out", route.out, "ROUTING.safetensors to write (moe.* tensors).")->required();
    m_route->add_option("--summary", route.summary, "Also write a JSON summary (capacity, dropped, losses).");
    m_route->add_option("--csv", route.csv, "Also write one CSV row per (token, choice): expert, gate, slot, kept.");
}

void CliParse::addStarCommand() {
    m_star = app.add_subcommand("star", "Star-Transformer dynamics: satellites and relay over T cycles, written as safetensors.");
    m_starText = m_star->add_option("--text", star.text, "Input text.");
    m_star->add_option("--text-file", star.textFile, "Read the input text from a file.")->excludes(m_starText);
    m_star->add_option("--model", star.model, "A star-transformer model folder (default: random weights from --seed).");
    m_star->add_option("--tokenizer", star.tokenizer, "bytes | chars | words (the random model; a folder reads bytes)")
        ->check(CLI::IsMember({"bytes", "chars", "words"}));
    m_star->add_option("--heads", star.heads, "Heads of the random model.")->check(CLI::Range(1, 64));
    m_star->add_option("--head-dim", star.headDim, "Head dimension of the random model.")->check(CLI::Range(1, 4096));
    m_star->add_option("--seed", star.seed, "Seed of the random model's weights and token states.")->check(kSeed);
    m_star->add_option("--param", star.params, "cycles=T (1 … 64, default 2) or cyclic=true|false (the random model).");
    m_star->add_option("--threads", star.threads, "LibTorch threads (0 = default).")->check(CLI::Range(0, 1024));
    m_star->add_option("--memory-budget", star.memoryBudget, "Bytes the cycles may allocate (default 40 % of memory).")
        ->check(kBytes);
    m_star->add_option("--out", star.out, "STAR.safetensors to write (star.* tensors).")->required();
    m_star->add_flag("--quiet", star.quiet, "No progress on stderr.");
}

void CliParse::addGenerateCommand() {
    m_generate = app.add_subcommand("generate", "Generate text with a model and write its attention of the whole sequence.");
    m_generate->add_option("--model", generate.model, "Model folder or GGUF file.")->required();
    m_generatePrompt = m_generate->add_option("--prompt", generate.prompt, "The text to continue.");
    m_generate->add_option("--prompt-file", generate.promptFile, "Read the prompt from a file.")->excludes(m_generatePrompt);
    m_generate->add_option("--max-new-tokens", generate.maxNewTokens, "Tokens to generate at most (default 32).")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{8192}));
    m_generate->add_option("--temperature", generate.temperature, "0: greedy (default); > 0: sampled from softmax(logits / T).")
        ->check(finiteRange(0.0, 100.0));
    m_generate->add_option("--top-k", generate.topK, "Sample among the K most likely tokens only (0: all).")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 24));
    m_generate->add_option("--seed", generate.seed, "Seed of the sampling's draws.")->check(kSeed);
    m_generate->add_option("--layer", generate.layer, "The layer --out holds (default 0; every layer is also written as "
                                                      "OUT.layerN.safetensors).")
        ->check(CLI::Range(0, 4096));
    m_generate->add_option("--threads", generate.threads, "LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    m_generate->add_option("--memory-budget", generate.memoryBudget, "Bytes the passes may allocate (default 40 % of memory).")
        ->check(kBytes);
    m_generate->add_option("--out", generate.out, "RESULT.safetensors: the layer's own attention of prompt and generated tokens.")
        ->required();
    m_generate->add_option("--summary", generate.summary, "JSON: prompt_ids, generated_ids, text, timings and the files written.");
    m_generate->add_flag("--quiet", generate.quiet, "No progress on stderr (the generated text still goes to stdout).");
}

void CliParse::addContextCommand() {
    m_context = app.add_subcommand("context", "exBERT's context search: the corpus tokens whose vectors at a layer are nearest "
                                              "(cosine) a token of the text, with their contexts, as JSON.");
    m_context->add_option("--model", context.model, "Model folder or GGUF file.")->required();
    m_context->add_option("--corpus", context.corpus, "The corpus: a UTF-8 text file, indexed once and kept beside the model.")
        ->required();
    m_contextText = m_context->add_option("--text", context.text, "The text whose token is searched for.");
    m_context->add_option("--text-file", context.textFile, "Read the text from a file.")->excludes(m_contextText);
    m_context->add_option("--token", context.token, "The token of the text (from 0, the model's own tokens).")
        ->required()
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
    m_context->add_option("--layer", context.layer, "The layer (from 0; hidden: its output).")->check(CLI::Range(0, 4096));
    m_context->add_option("--space", context.space, "hidden (default) | keys | queries.")
        ->check(CLI::IsMember({"hidden", "keys", "queries"}));
    m_context->add_option("--head", context.head, "keys and queries: compare this head's slice alone (default: all heads); "
                                                  "the head whose strongest key is listed (default 0).")
        ->check(CLI::Range(0, 4096));
    m_context->add_option("--top", context.top, "Matches listed (default 10).")->check(CLI::Range(std::int64_t{1}, std::int64_t{10000}));
    m_context->add_option("--context-bytes", context.contextBytes, "Corpus bytes shown on each side (default 40).")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{4096}));
    m_context->add_flag("--rebuild", context.rebuild, "Index the corpus again even when an index is kept.");
    m_context->add_option("--index-budget", context.indexBudget, "Bytes the index may hold (default 256 MiB).")->check(kBytes);
    m_context->add_option("--threads", context.threads, "LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    m_context->add_option("--memory-budget", context.memoryBudget, "Bytes each pass may allocate (default 40 % of memory).")
        ->check(kBytes);
    m_context->add_flag("--quiet", context.quiet, "No progress on stderr.");
}

bool CliParse::parse(int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        exit = app.exit(e);
        return false;
    } catch (const CLI::CallForAllHelp& e) {
        exit = app.exit(e);
        return false;
    } catch (const CLI::CallForVersion& e) {
        exit = app.exit(e);
        return false;
    } catch (const CLI::ParseError& e) {
        printError(e.what());
        exit = kExitUsage;
        return false;
    }
    if (m_variants->parsed()) command = Command::Variants;
    else if (m_tile->parsed()) command = Command::Tile;
    else if (m_neuron->parsed()) command = Command::Neuron;
    else if (m_qkmap->parsed()) command = Command::QkMap;
    else if (m_sweep->parsed()) command = Command::Sweep;
    else if (m_train->parsed()) command = Command::Train;
    else if (m_analyze->parsed()) command = Command::Analyze;
    else if (m_run->parsed()) command = Command::Run;
    else if (m_route->parsed()) command = Command::Route;
    else if (m_star->parsed()) command = Command::Star;
    else if (m_generate->parsed()) command = Command::Generate;
    else if (m_context->parsed()) command = Command::Context;
    const bool captured = (command == Command::Analyze && m_analyze->get_option("--attention")->count() > 0) ||
                          (command == Command::Run && !run.attention.empty());
    if (command == Command::Analyze && analyze.model.empty()) {
        printError("analyze needs a model: --model DIR or --attention FILE");
        exit = kExitUsage;
        return false;
    }
    if (command == Command::Analyze && !captured && !m_analyzeText->count() && analyze.textFile.empty() && analyze.image.empty()) {
        printError("analyze needs an input: --text STR, --text-file PATH or (a vision model) --image PATH");
        exit = kExitUsage;
        return false;
    }
    if (command == Command::Run && !captured && run.text.empty() && run.textFile.empty() && run.qkvFile.empty() &&
        run.image.empty() && !m_runText->count()) {
        printError("run needs an input: --text STR, --text-file PATH, --image PATH, --qkv PATH or --attention PATH (with --model: "
                   "--text, --text-file or, for a vision model, --image)");
        exit = kExitUsage;
        return false;
    }
    if (command == Command::Run && run.variant.empty() && run.model.empty()) {
        printError("--variant is required (without it, --model DIR --layer L writes the model's own attention of that layer)");
        exit = kExitUsage;
        return false;
    }
    if (command == Command::Run && run.variant.empty() && (!run.params.empty() || run.causal)) {
        printError(std::string(run.causal ? "--causal" : "--param") +
                   " needs --variant: the model's own attention takes the layer's own settings");
        exit = kExitUsage;
        return false;
    }
    if (command == Command::Run && m_run->get_option("--layer")->count() > 0 && run.model.empty() && !captured) {
        printError("--layer needs --model DIR or --attention FILE");
        exit = kExitUsage;
        return false;
    }
    if (command == Command::Generate) {
        generate.promptGiven = m_generatePrompt->count() > 0;
        if (generate.promptFile.empty() && !generate.promptGiven) {
            printError("generate needs a prompt: --prompt TEXT or --prompt-file PATH");
            exit = kExitUsage;
            return false;
        }
    }
    if (command == Command::Neuron) {
        neuron.textGiven = m_neuronText->count() > 0;
        const bool modelGiven = !neuron.model.empty();
        const char* problem = nullptr;
        if (!modelGiven && neuron.file.empty()) problem = "neuron needs a RESULT file or --model PATH with --text or --text-file";
        else if (modelGiven && !neuron.textGiven && neuron.textFile.empty()) problem = "neuron --model needs the text: --text STR or --text-file PATH";
        else if (!modelGiven && (neuron.textGiven || !neuron.textFile.empty() || m_neuron->get_option("--layer")->count() > 0))
            problem = "--text, --text-file and --layer go with --model (a RESULT file holds its own input)";
        if (problem) {
            printError(problem);
            exit = kExitUsage;
            return false;
        }
    }
    if (command == Command::Context) {
        context.textGiven = m_contextText->count() > 0;
        if (!context.textGiven && context.textFile.empty()) {
            printError("context needs the text whose token is searched for: --text STR or --text-file PATH");
            exit = kExitUsage;
            return false;
        }
    }
    if (command == Command::Star) {
        star.textGiven = m_starText->count() > 0;
        if (star.textFile.empty() && !star.textGiven) {
            printError("star needs an input: --text STR or --text-file PATH");
            exit = kExitUsage;
            return false;
        }
    }
    if (command == Command::Route) {
        route.textGiven = m_routeText->count() > 0;
        route.capacityGiven = m_route->get_option("--capacity-factor")->count() > 0 ||
                              m_route->get_option("--expert-capacity")->count() > 0;
        route.policyGiven = m_route->get_option("--policy")->count() > 0 || m_route->get_option("--k")->count() > 0 ||
                            m_route->get_option("--normalize")->count() > 0;
        if (route.input.empty() && route.textFile.empty() && !route.textGiven) {
            printError("route needs an input: --input PATH, --text STR or --text-file PATH");
            exit = kExitUsage;
            return false;
        }
    }
    exit = command == Command::None ? kExitUsage : 0;
    return command != Command::None;
}

bool needsTorch(Command command) {
    return command == Command::Run || command == Command::Analyze || command == Command::Train || command == Command::Generate ||
           command == Command::Context;
}

}  // namespace attnscope::cli
