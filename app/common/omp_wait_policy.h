#pragma once
// Makes OpenMP threads wait passively. libgomp reads OMP_WAIT_POLICY once, when it loads, which
// is before main() runs: so when the variable is unset we set it and re-execute the program.
// Measured on 2 cores: spinning OpenMP threads beside OpenBLAS's own threads slowed blocked
// attention 3-5x (docs/PERFORMANCE.md). A value the user set is always respected.

#include <cstdlib>
#include <unistd.h>

namespace attnscope::app {

inline void ensurePassiveOpenMpWait(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    ::execv("/proc/self/exe", argv);
    // execv only returns on failure: carry on with the default policy rather than fail.
}

}  // namespace attnscope::app
