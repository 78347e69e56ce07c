// attnscope-cli: runs attention variants and writes results (no Qt).

#include "cli/cli_commands.h"
#include "common/omp_wait_policy.h"

#include <iostream>

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    using namespace attnscope::cli;

    CLI::App app{"AttnScope command line: run attention variants, write results as safetensors."};
    app.require_subcommand(1);
    app.set_version_flag("--version", "attnscope-cli 0.1.0");

    VariantsOptions variantsOptions;
    auto* variants = app.add_subcommand("variants", "List variants and their parameter schemas.");
    variants->add_flag("--json", variantsOptions.json, "Print the list as JSON.");

    RunOptions run;
    auto* runCmd = app.add_subcommand("run", "Run one variant and write RESULT.safetensors.");
    runCmd->add_option("--variant", run.variant, "Variant id (see 'attnscope-cli variants').")->required();
    runCmd->add_option("--param", run.params, "Variant parameter NAME=VALUE (repeatable).");
    auto* text = runCmd->add_option("--text", run.text, "Input text.");
    auto* textFile = runCmd->add_option("--text-file", run.textFile, "Read the input text from a file.");
    auto* qkv = runCmd->add_option("--qkv", run.qkvFile,
                                   "safetensors file with float32 q, k, v [H, n, d] (skips tokenizing).");
    auto* model = runCmd->add_option("--model", run.model,
                                     "Model folder (config.json + model.safetensors + tokenizer): run the variant "
                                     "on the real Q/K/V of --layer for the text.");
    auto* layer = runCmd->add_option("--layer", run.layer, "Layer of --model whose Q/K/V are used (from 0).")
                      ->check(CLI::Range(0, 999));
    layer->needs(model);
    text->excludes(textFile)->excludes(qkv);
    textFile->excludes(qkv);
    model->excludes(qkv);
    runCmd->add_option("--tokenizer", run.tokenizer, "bytes | chars | words")
        ->check(CLI::IsMember({"bytes", "chars", "words"}));
    runCmd->add_option("--heads", run.heads, "Heads of the random projections.")->check(CLI::Range(1, 256));
    runCmd->add_option("--head-dim", run.headDim, "Head dimension d.")->check(CLI::Range(1, 1024));
    runCmd->add_option("--model-dim", run.modelDim, "Model dimension (0 = heads x head dim).")
        ->check(CLI::Range(0, 65536));
    runCmd->add_option("--seed", run.seed, "Seed of every random draw.");
    runCmd->add_flag("--causal", run.causal, "Causal attention (sets the variant's 'causal' parameter).");
    runCmd->add_option("--memory-budget", run.memoryBudget, "Bytes the n x n matrices may take.");
    runCmd->add_option("--dense-limit", run.denseLimit, "Write dense weights and mask up to this many tokens.")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
    runCmd->add_option("--threads", run.threads, "LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    runCmd->add_option("--out", run.out, "RESULT.safetensors to write.")->required();
    runCmd->add_option("--summary", run.summary, "Also write a SUMMARY.json.");
    runCmd->add_flag("--write-pattern", run.writePattern,
                     "Also list every (query, key) entry of the pattern with its reason (refused over the memory budget).");
    runCmd->add_flag("--quiet", run.quiet, "No progress on stderr.");

    AnalyzeOptions analyze;
    auto* analyzeCmd = app.add_subcommand("analyze", "Head atlas of a checkpoint: per-head metrics and pattern coverage.");
    analyzeCmd->add_option("--model", analyze.model, "Model folder (config.json + model.safetensors + tokenizer).")
        ->required();
    auto* analyzeText = analyzeCmd->add_option("--text", analyze.text, "Input text.");
    auto* analyzeTextFile = analyzeCmd->add_option("--text-file", analyze.textFile, "Read the input text from a file.");
    analyzeText->excludes(analyzeTextFile);
    analyzeCmd->add_option("--coverage", analyze.coverage,
                           "Coverage setting VARIANT[:NAME=VALUE,...] (repeatable; default: 10 settings).");
    analyzeCmd->add_option("--threads", analyze.threads, "LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    analyzeCmd->add_option("--out", analyze.out, "ATLAS.json to write.")->required();
    analyzeCmd->add_flag("--quiet", analyze.quiet, "No progress on stderr.");

    TileOptions tile;
    auto* tileCmd = app.add_subcommand("tile", "Print a rectangle of one head's exact weights from a result file.");
    tileCmd->add_option("file", tile.file, "RESULT.safetensors written by 'run'.")->required();
    tileCmd->add_option("--head", tile.head, "Head (from 0).")->check(CLI::Range(0, 1 << 20));
    tileCmd->add_option("--rows", tile.rows, "Queries A:B (B exclusive), or A; default all.");
    tileCmd->add_option("--keys", tile.keys, "Keys C:D (D exclusive), or C; default all.");
    tileCmd->add_option("--format", tile.format, "json (weights and reasons) | csv (weights)")
        ->check(CLI::IsMember({"json", "csv"}));

    SweepOptions sweep;
    auto* sweepCmd = app.add_subcommand("sweep", "Time each variant at each length in a fresh process: CSV + Markdown table vs full.");
    sweepCmd->add_option("--variants", sweep.variants, "ID[:NAME=VALUE,...],... (list values with ';', e.g. global=0;7)")->required();
    sweepCmd->add_option("--n", sweep.sizes, "Token counts, e.g. 1024,2048,4096.")->required();
    sweepCmd->add_option("--heads", sweep.heads, "Heads of the random Q, K, V.")->check(CLI::Range(1, 256));
    sweepCmd->add_option("--head-dim", sweep.headDim, "Head dimension d.")->check(CLI::Range(1, 1024));
    sweepCmd->add_option("--seed", sweep.seed, "Seed of the random Q, K, V.");
    sweepCmd->add_option("--threads", sweep.threads, "Threads of each run (0 = all cores).")->check(CLI::Range(0, 1024));
    sweepCmd->add_option("--memory-budget", sweep.memoryBudget, "Bytes each run may allocate (larger sizes are skipped).");
    sweepCmd->add_option("--out", sweep.out, "CSV to write.");
    sweepCmd->add_option("--markdown", sweep.markdown, "Markdown table to write (default: stdout).");
    sweepCmd->add_flag("--quiet", sweep.quiet, "No progress on stderr.");

    TrainCliOptions train;
    auto* trainCmd = app.add_subcommand("train", "Train a small model with a chosen attention variant (CPU).");
    trainCmd->add_option("--task", train.task, "copy | reverse | duplicate | text")
        ->check(CLI::IsMember({"copy", "reverse", "duplicate", "text"}));
    trainCmd->add_option("--text-file", train.textFile, "Training text for --task text.");
    trainCmd->add_option("--variant", train.variant, "Attention variant of every layer.");
    trainCmd->add_option("--param", train.params, "Variant parameter NAME=VALUE (repeatable).");
    trainCmd->add_option("--layers", train.layers, "Layers.")->check(CLI::Range(1, 48));
    trainCmd->add_option("--heads", train.heads, "Heads per layer.")->check(CLI::Range(1, 64));
    trainCmd->add_option("--dim", train.dim, "Model dimension (a multiple of --heads).")->check(CLI::Range(1, 1024));
    trainCmd->add_option("--steps", train.steps, "Optimisation steps.")->check(CLI::Range(std::int64_t{1}, std::int64_t{10000000}));
    trainCmd->add_option("--batch", train.batch, "Examples per step.")->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
    trainCmd->add_option("--length", train.length, "Symbols per example (0 = 8 for tasks, 48 bytes for text).")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1024}));
    trainCmd->add_option("--lr", train.learningRate, "Peak learning rate (Adam).");
    trainCmd->add_option("--seed", train.seed, "Seed of the data, the initial weights and the variant's draws.");
    trainCmd->add_option("--threads", train.threads, "LibTorch threads (0 = all cores).")->check(CLI::Range(0, 1024));
    trainCmd->add_option("--out", train.out, "Model folder to write.")->required();
    trainCmd->add_flag("--quiet", train.quiet, "No progress on stderr.");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        printError(e.what());
        return kExitUsage;
    }
    if (variants->parsed()) return variantsCommand(variantsOptions);
    if (tileCmd->parsed()) return tileCommand(tile);
    if (sweepCmd->parsed()) return sweepCommand(sweep);
    if (trainCmd->parsed()) return trainCommand(train);
    if (analyzeCmd->parsed()) {
        if (!analyzeText->count() && analyze.textFile.empty()) {
            printError("analyze needs an input: --text STR or --text-file PATH");
            return kExitUsage;
        }
        return analyzeCommand(analyze);
    }
    if (runCmd->parsed()) {
        if (run.text.empty() && run.textFile.empty() && run.qkvFile.empty() && !text->count()) {
            printError("run needs an input: --text STR, --text-file PATH or --qkv PATH (with --model: --text or --text-file)");
            return kExitUsage;
        }
        return runCommand(run);
    }
    return kExitUsage;
}
