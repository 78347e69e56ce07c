// The process-wide kernel choice (attnscope/kernel_path.h). Relaxed order is enough: it is set
// before the first run and only read afterwards.

#include <attnscope/kernel_path.h>

#include <atomic>

namespace attnscope::engine {

namespace {
std::atomic<KernelPath> g_path{KernelPath::Fastest};
}

void setKernelPath(KernelPath path) { g_path.store(path, std::memory_order_relaxed); }

KernelPath kernelPath() { return g_path.load(std::memory_order_relaxed); }

}  // namespace attnscope::engine
