#pragma once
// The threads of the engine's own kernels (the pattern kernel, feature attention, per-head jobs):
// plain std::threads started per call, so that the same code runs in the launcher, which loads
// neither LibTorch nor OpenMP, and in the LibTorch process. A call starts at most a few threads
// (one per core) for work of milliseconds or more: the start-up (tens of microseconds) is noise.

#include <cstdint>
#include <functional>

namespace attnscope::engine {

/// How many threads the kernels use (--threads; all cores when never set).
int kernelThreads();
/// Sets it (>= 1); the engine and the launcher set it from the request's thread count.
void setKernelThreads(int threads);

/// Runs body(worker) for every worker in [0, workers) at once: worker 0 on the calling thread,
/// the others on threads started for the call. Returns when all have ended; the first exception
/// (worker 0's before the others') is then rethrown.
void runOnWorkers(int workers, const std::function<void(int worker)>& body);

/// Runs body(item, worker) for every item in [0, count) on min(kernelThreads(), count) workers,
/// each claiming the next item when done with one; worker indexes per-thread scratch.
void forEachItem(std::int64_t count, const std::function<void(std::int64_t item, int worker)>& body);

/// Sets the kernels' threads for a scope and restores the previous count after it.
class KernelThreadsScope {
public:
    explicit KernelThreadsScope(int threads) : m_previous(kernelThreads()) { setKernelThreads(threads); }
    ~KernelThreadsScope() { setKernelThreads(m_previous); }
    KernelThreadsScope(const KernelThreadsScope&) = delete;
    KernelThreadsScope& operator=(const KernelThreadsScope&) = delete;

private:
    int m_previous;
};

}  // namespace attnscope::engine
