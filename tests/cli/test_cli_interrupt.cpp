// Ctrl-C and SIGTERM end a long run end to end: the real binary, a signal mid-run, exit 130 / 143
// within a second, no output file, and a line saying what was cancelled.

#include "cli_test_support.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

/// Starts `attnscope-cli args…` with stderr to `errPath`; returns its pid.
pid_t spawnCli(const std::vector<std::string>& args, const std::string& errPath) {
    std::vector<std::string> all = {ATTNSCOPE_CLI_PATH};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

/// Waits until `pid` catches SIGINT (its handlers are installed once LibTorch has loaded and the
/// command line is parsed; a signal before that would take the default action).
bool waitForHandlers(pid_t pid, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        std::ifstream status("/proc/" + std::to_string(pid) + "/status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind("SigCgt:", 0) == 0 && (std::stoull(line.substr(7), nullptr, 16) & (1ull << (SIGINT - 1))) != 0)
                return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

std::string longText() {
    const std::string path = tempPath("interrupt_text.txt");
    std::mt19937 rng(1);
    std::string text(32768, ' ');
    for (auto& c : text) c = "abcdefgh "[rng() % 9];
    std::ofstream(path) << text;
    return path;
}

// How soon the process must have ended after the signal. Under AddressSanitizer the exit also
// runs LeakSanitizer's scan of the heap (0.3 s idle here, past a second on a loaded machine): a
// cost of the checking build, not of the cancel.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)  // clang
#define CHECKED_BY_ASAN
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)  // g++
#define CHECKED_BY_ASAN
#endif
#ifdef CHECKED_BY_ASAN
constexpr double kEndsWithinSeconds = 3.0;
#else
constexpr double kEndsWithinSeconds = 1.0;
#endif

}  // namespace

TEST(CliInterrupt, SignalCancelsTheRunAndLeavesNoFile) {
    const std::string text = longText();
    for (const int signal : {SIGINT, SIGTERM}) {
        const std::string out = tempPath("interrupted.safetensors"), summary = tempPath("interrupted.json");
        const std::string err = tempPath("interrupted.err");
        std::remove(out.c_str());
        std::remove(summary.c_str());
        // full attention over 32,768 characters: tens of seconds, far longer than the wait below
        const pid_t pid = spawnCli({"run", "--variant", "full", "--tokenizer", "chars", "--text-file", text, "--out", out,
                                    "--summary", summary},
                                   err);
        ASSERT_GT(pid, 0);
        ASSERT_TRUE(waitForHandlers(pid, std::chrono::seconds(60)));
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the attention running
        ASSERT_EQ(::kill(pid, signal), 0);
        const auto sent = std::chrono::steady_clock::now();
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
        ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        EXPECT_EQ(WEXITSTATUS(status), 128 + signal);
        EXPECT_LT(seconds, kEndsWithinSeconds);
        EXPECT_FALSE(std::filesystem::exists(out));
        EXPECT_FALSE(std::filesystem::exists(summary));
        const std::string said = slurp(err);
        EXPECT_NE(said.find("the run was cancelled by " + std::string(signal == SIGINT ? "SIGINT" : "SIGTERM")), std::string::npos) << said;
        EXPECT_NE(said.find("no output was written"), std::string::npos) << said;
    }
}
