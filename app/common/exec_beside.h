#pragma once
// A launcher's one step: replace this process with a program that lives beside it (same folder,
// same arguments), with OMP_WAIT_POLICY=PASSIVE in the environment unless the user set a value.
// libgomp reads the policy once, when it loads, before main(): a launcher that links neither
// LibTorch nor Qt sets it for nearly nothing, where a program setting it for itself has to load
// LibTorch a second time (omp_wait_policy.h). Spinning OpenMP threads beside OpenBLAS's own
// threads slowed blocked attention 3-5x on 2 cores.

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>

namespace attnscope::app {

/// Returns only when the program could not be started, with the reason on stderr.
inline int execBeside(const char* program, char** argv, const char* who) {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::string target = (self.parent_path() / program).string();
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    ::execv(target.c_str(), argv);
    std::fprintf(stderr, "%s: error: cannot start %s: %s\n", who, target.c_str(), std::strerror(errno));
    return 1;
}

}  // namespace attnscope::app
