#pragma once
// Running the real attnscope-cli binary from the CLI tests: exit status, stdout and stderr.

#include <gtest/gtest.h>

#include <attnscope/tensor.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
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

// `program` (a path, after any VAR=value settings) with `args`.
[[maybe_unused]] CommandResult runProgram(const std::string& program, const std::string& args) {
    const std::string out = tempPath("stdout.txt"), err = tempPath("stderr.txt");
    const std::string command = program + " " + args + " >" + out + " 2>" + err;
    CommandResult r;
    const int raw = std::system(command.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.stdoutText = slurp(out);
    r.stderrText = slurp(err);
    return r;
}

[[maybe_unused]] CommandResult runCli(const std::string& args) { return runProgram(ATTNSCOPE_CLI_PATH, args); }

// [h, n, d] standard normal values from `seed`.
[[maybe_unused]] attnscope::engine::PlainTensor randomTensor(std::int64_t h, std::int64_t n, std::int64_t d, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> values(static_cast<std::size_t>(h * n * d));
    for (auto& x : values) x = dist(gen);
    return attnscope::engine::PlainTensor::fromF32({h, n, d}, values);
}

}  // namespace
