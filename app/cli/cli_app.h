#pragma once
// The command line's whole parse tree, shared by attnscope-cli (the launcher, which runs the
// commands that need no LibTorch itself) and attnscope-cli-torch (every command): both accept
// exactly the same flags and print the same help.

#include "cli/cli_commands.h"

#include <CLI/CLI.hpp>

#include <memory>

namespace attnscope::cli {

enum class Command { None, Variants, Run, Analyze, Tile, Neuron, QkMap, Sweep, Train, Route, Star, Generate, Context };

struct CliParse {
    CLI::App app{"AttnScope command line: run attention variants, write results as safetensors."};
    VariantsOptions variants;
    RunOptions run;
    AnalyzeOptions analyze;
    TileOptions tile;
    NeuronOptions neuron;
    QkMapCliOptions qkmap;
    SweepOptions sweep;
    TrainCliOptions train;
    RouteOptions route;
    StarOptions star;
    GenerateOptions generate;
    ContextOptions context;
    /// After parse(): the command given, or an exit status (help, version, usage error) in `exit`.
    Command command = Command::None;
    int exit = 0;

    CliParse();
    CliParse(const CliParse&) = delete;
    CliParse& operator=(const CliParse&) = delete;

    /// Parses argv. False when the process should exit now with `exit` (help printed, a usage
    /// error reported, or an input missing).
    bool parse(int argc, char** argv);

private:
    // one subcommand each, with its options and checks
    void addVariantsCommand();
    void addRunCommand();
    void addAnalyzeCommand();
    void addTileCommand();
    void addNeuronCommand();
    void addQkMapCommand();
    void addSweepCommand();
    void addTrainCommand();
    void addRouteCommand();
    void addStarCommand();
    void addGenerateCommand();
    void addContextCommand();

    CLI::App *m_variants = nullptr, *m_run = nullptr, *m_analyze = nullptr, *m_tile = nullptr, *m_neuron = nullptr, *m_qkmap = nullptr, *m_sweep = nullptr,
             *m_train = nullptr, *m_route = nullptr, *m_star = nullptr, *m_generate = nullptr, *m_context = nullptr;
    CLI::Option *m_runText = nullptr, *m_analyzeText = nullptr, *m_routeText = nullptr, *m_starText = nullptr,
                *m_generatePrompt = nullptr, *m_neuronText = nullptr, *m_contextText = nullptr;
};

/// Whether the command needs LibTorch (run, analyze, train) or not (variants, tile, neuron, qkmap, sweep, route).
bool needsTorch(Command command);

}  // namespace attnscope::cli
