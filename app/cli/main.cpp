// attnscope-cli: parses the command line and runs the commands that need no LibTorch (variants,
// tile, the sweep's driver) itself; the others go to attnscope-cli-torch beside it, started with
// OMP_WAIT_POLICY already set, so that LibTorch (some 290 shared libraries) is loaded once, by
// the process that uses it, and never for a command that does not.

#include "cli/cli_app.h"
#include "common/exec_beside.h"

int main(int argc, char** argv) {
    using namespace attnscope::cli;
    CliParse cli;
    if (!cli.parse(argc, argv)) return cli.exit;
    switch (cli.command) {
    case Command::Variants: return variantsCommand(cli.variants);
    case Command::Tile: return tileCommand(cli.tile);
    case Command::Sweep: return sweepCommand(cli.sweep);
    case Command::Route:
        if (cli.route.model.empty()) return routeCommand(cli.route);
        [[fallthrough]];  // a model's pass needs LibTorch
    default: return attnscope::app::execBeside("attnscope-cli-torch", argv, "attnscope-cli");
    }
}
