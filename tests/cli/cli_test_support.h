#pragma once
// Running the real attnscope-cli binary from the CLI tests: exit status, stdout and stderr.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct CommandResult {
    int status = -1;
    std::string stdoutText, stderrText;
};

// (per process: two suites running at once must not share their files)
std::string tempPath(const std::string& name) {
    return ::testing::TempDir() + "attnscope_cli_" + std::to_string(::getpid()) + "_" + name;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

[[maybe_unused]] CommandResult runCli(const std::string& args) {
    const std::string out = tempPath("stdout.txt"), err = tempPath("stderr.txt");
    const std::string command = std::string(ATTNSCOPE_CLI_PATH) + " " + args + " >" + out + " 2>" + err;
    CommandResult r;
    const int raw = std::system(command.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.stdoutText = slurp(out);
    r.stderrText = slurp(err);
    return r;
}

}  // namespace
