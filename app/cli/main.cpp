// attnscope-cli: parses the command line and runs the commands that need no LibTorch (tile, the
// sweep's driver) itself; the others go to attnscope-cli-torch beside it, started with
// OMP_WAIT_POLICY already set, so that LibTorch (some 290 shared libraries) is loaded once, by
// the process that uses it, and never for a command that does not.

#include "cli/cli_app.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>

namespace {

using namespace attnscope::cli;

// Replaces this process with attnscope-cli-torch (same arguments); returns only on failure.
int handToTorchCli(char** argv) {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::string target = (self.parent_path() / "attnscope-cli-torch").string();
    // libgomp reads the policy once, when it loads: spinning OpenMP threads beside OpenBLAS's own
    // slowed blocked attention 3-5x on 2 cores. A value the user set is respected.
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    ::execv(target.c_str(), argv);
    printError("cannot start " + target + ": " + std::strerror(errno));
    return kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
    CliParse cli;
    if (!cli.parse(argc, argv)) return cli.exit;
    switch (cli.command) {
    case Command::Tile: return tileCommand(cli.tile);
    case Command::Sweep: return sweepCommand(cli.sweep);
    default: return handToTorchCli(argv);
    }
}
