#pragma once
// A launcher's one step: replace this process with a program that lives beside it (same folder,
// same arguments), with AttnScope's OpenMP environment (omp_wait_policy.h). libgomp reads it
// once, when it loads, before main(): a launcher that links neither LibTorch nor Qt sets it for
// nearly nothing, where a program setting it for itself has to load LibTorch a second time.

#include "common/beside_this_program.h"
#include "common/omp_wait_policy.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <unistd.h>

namespace attnscope::app {

/// Returns only when the program could not be started, with the reason on stderr.
inline int execBeside(const char* program, char** argv, const char* who) {
    std::error_code error;
    const std::string target = besideThisProgram(program, error);
    setOpenMpEnvironment();
    ::execv(target.c_str(), argv);
    std::fprintf(stderr, "%s: error: cannot start %s: %s\n", who, target.c_str(), std::strerror(errno));
    return 1;
}

}  // namespace attnscope::app
