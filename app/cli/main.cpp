// attnscope-cli: parses the command line and runs the commands that need no LibTorch (variants,
// tile, the sweep's driver, route without a model, and run on explicit q, k, v with a torch-free
// variant) itself; the others go to attnscope-cli-torch beside it, started with
// OMP_WAIT_POLICY already set, so that LibTorch (some 290 shared libraries) is loaded once, by
// the process that uses it, and never for a command that does not.

#include "cli/cli_app.h"
#include "cli/cli_progress.h"
#include "cli/cli_run_torch_free.h"
#include "common/exec_beside.h"
#include "common/huge_page_malloc.h"

int main(int argc, char** argv) {
    using namespace attnscope::cli;
    CliParse cli;
    if (!cli.parse(argc, argv)) return cli.exit;
    switch (cli.command) {
    case Command::Variants: return variantsCommand(cli.variants);
    case Command::Tile: return tileCommand(cli.tile);
    case Command::Neuron:
        if (cli.neuron.model.empty()) return neuronCommand(cli.neuron);
        return attnscope::app::execBeside("attnscope-cli-torch", argv, "attnscope-cli");  // a model's pass
    case Command::QkMap: return qkmapCommand(cli.qkmap);
    case Command::Sweep: return sweepCommand(cli.sweep);
    case Command::Run:
        if (runsTorchFree(cli.run)) {
            attnscope::app::ensureHugePageMalloc(argv);
            installInterruptHandlers();  // Ctrl-C and SIGTERM cancel through the run's progress checks
            return torchFreeRunCommand(cli.run);
        }
        return attnscope::app::execBeside("attnscope-cli-torch", argv, "attnscope-cli");
    case Command::Route:
        if (cli.route.model.empty()) return routeCommand(cli.route);
        [[fallthrough]];  // a model's pass needs LibTorch
    default: return attnscope::app::execBeside("attnscope-cli-torch", argv, "attnscope-cli");
    }
}
