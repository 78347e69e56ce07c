#include "base/runtime/worker_threads.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace attnscope::engine {
namespace {

std::atomic<int> g_threads{0};  // 0: not set, all cores

}  // namespace

int kernelThreads() {
    const int set = g_threads.load(std::memory_order_relaxed);
    return set > 0 ? set : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void setKernelThreads(int threads) { g_threads.store(std::max(1, threads), std::memory_order_relaxed); }

void runOnWorkers(int workers, const std::function<void(int worker)>& body) {
    if (workers <= 1) {
        body(0);
        return;
    }
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(workers - 1));
    auto runWorker = [&](int worker) {
        try {
            body(worker);
        } catch (...) {
            errors[static_cast<std::size_t>(worker)] = std::current_exception();
        }
    };
    try {
        for (int w = 1; w < workers; ++w) threads.emplace_back(runWorker, w);
    } catch (...) {
        // (a thread that could not start: the started ones finish, the rest run here)
        for (int w = static_cast<int>(threads.size()) + 1; w < workers; ++w) runWorker(w);
    }
    runWorker(0);
    for (auto& t : threads) t.join();
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
}

void forEachItem(std::int64_t count, const std::function<void(std::int64_t item, int worker)>& body) {
    std::atomic<std::int64_t> next{0};
    const int workers = static_cast<int>(std::min<std::int64_t>(kernelThreads(), std::max<std::int64_t>(count, 1)));
    runOnWorkers(workers, [&](int worker) {
        for (std::int64_t item = next.fetch_add(1); item < count; item = next.fetch_add(1)) body(item, worker);
    });
}

}  // namespace attnscope::engine
