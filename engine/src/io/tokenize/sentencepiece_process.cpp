#include "io/tokenize/sentencepiece_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace attnscope::engine {
namespace {

constexpr const char* kProgram = "attnscope-sentencepiece";

std::vector<std::string> candidates() {
    std::vector<std::string> out;
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        out.push_back((exe.parent_path() / kProgram).string());
        out.push_back((exe.parent_path() / ".." / "bin" / kProgram).string());
    }
#ifdef ATTNSCOPE_SENTENCEPIECE_HELPER
    out.push_back(ATTNSCOPE_SENTENCEPIECE_HELPER);
#endif
    return out;
}

Result<std::string> findHelper() {
    std::string tried;
    for (const std::string& path : candidates()) {
        if (::access(path.c_str(), X_OK) == 0) return path;
        tried += (tried.empty() ? "" : ", ") + path;
    }
    return makeError(ErrorCode::Unsupported, std::string(kProgram) + " not found (looked in " + tried +
                                                 "): SentencePiece tokenizers are not available in this build");
}

std::string readAll(int fd) {
    std::string out;
    char buffer[65536];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got > 0) out.append(buffer, static_cast<std::size_t>(got));
        else if (got == 0 || errno != EINTR) break;
    }
    return out;
}

}  // namespace

Result<std::string> runSentencePieceHelper(const std::vector<std::string>& args) {
    auto helper = findHelper();
    if (!helper) return helper.error();
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return makeError(ErrorCode::Io, std::string("pipe: ") + std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(out[0]);
        ::close(out[1]);
        return makeError(ErrorCode::Io, std::string("pipe: ") + std::strerror(errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char*> argv{const_cast<char*>(helper.value().c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, helper.value().c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    if (spawned != 0) {
        ::close(out[0]);
        ::close(err[0]);
        return makeError(ErrorCode::Io, helper.value() + ": cannot be started (" + std::strerror(spawned) + ")");
    }
    // The helper prints its error only after its output (and little of it), so reading the two in
    // turn cannot block on a full pipe.
    std::string text = readAll(out[0]), message = readAll(err[0]);
    ::close(out[0]);
    ::close(err[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
        return makeError(ErrorCode::InvalidInput, message.empty() ? helper.value() + " failed" : message);
    }
    return text;
}

}  // namespace attnscope::engine
