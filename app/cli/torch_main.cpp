// attnscope-cli-torch: every command of attnscope-cli, LibTorch loaded. Started by attnscope-cli
// for the commands that need LibTorch; run directly it sets OMP_WAIT_POLICY itself (by running
// itself again).

#include "cli/cli_app.h"
#include "cli/cli_progress.h"
#include "common/omp_wait_policy.h"

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    using namespace attnscope::cli;
    CliParse cli;
    if (!cli.parse(argc, argv)) return cli.exit;
    installInterruptHandlers();  // Ctrl-C and SIGTERM cancel through the engine's progress checks
    switch (cli.command) {
    case Command::Variants: return variantsCommand(cli.variants);
    case Command::Run: return runCommand(cli.run);
    case Command::Analyze: return analyzeCommand(cli.analyze);
    case Command::Tile: return tileCommand(cli.tile);
    case Command::Neuron: return cli.neuron.model.empty() ? neuronCommand(cli.neuron) : neuronModelCommand(cli.neuron);
    case Command::QkMap: return qkmapCommand(cli.qkmap);
    case Command::Sweep: return sweepCommand(cli.sweep);
    case Command::Route: return cli.route.model.empty() ? routeCommand(cli.route) : routeModelCommand(cli.route);
    case Command::Train: return trainCommand(cli.train);
    case Command::Star: return starCommand(cli.star);
    case Command::Generate: return generateCommand(cli.generate);
    case Command::Context: return contextCommand(cli.context);
    case Command::None: break;
    }
    return kExitUsage;
}
