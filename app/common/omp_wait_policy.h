#pragma once
// The OpenMP environment AttnScope's LibTorch programs start with. libgomp reads it once, when it
// loads, which is before main() runs: launchers set it before they start those programs
// (exec_beside.h), and a program started directly re-executes itself once with it set.
// - OMP_WAIT_POLICY=PASSIVE. Measured on 2 cores: spinning OpenMP threads beside OpenBLAS's own
//   threads slowed blocked attention 3-5x (docs/PERFORMANCE.md).
// - OMP_NUM_THREADS = the number of hardware threads, the engine's default thread count. LibTorch's
//   own default here is 1, and setting the count through at::set_num_threads also starts caffe2's
//   pthreadpool, which only QNNPACK and XNNPACK use: two spinning threads that made a do-nothing
//   LibTorch program 7 % slower (paired). With the variable set, the engine finds the count
//   already right and sets nothing.
// A value the user set is always respected.

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>

namespace attnscope::app {

inline void setOpenMpEnvironment() {
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    ::setenv("OMP_NUM_THREADS", std::to_string(std::max(1u, std::thread::hardware_concurrency())).c_str(), 0);
}

inline void ensurePassiveOpenMpWait(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
    setOpenMpEnvironment();
    ::execv("/proc/self/exe", argv);
    // execv only returns on failure: carry on with the default policy rather than fail.
}

}  // namespace attnscope::app
