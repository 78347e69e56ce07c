#pragma once
// The trainers' tensors are tiny: one intra-op thread is faster than many and makes a run's bytes
// repeat for a seed. The engine's thread count comes back when the scope ends.

#include "base/runtime/worker_threads.h"

#include <ATen/Parallel.h>

namespace attnscope::engine {

class OneThreadScope {
public:
    OneThreadScope() : m_previous(at::get_num_threads()), m_kernels(1) { at::set_num_threads(1); }
    ~OneThreadScope() { at::set_num_threads(m_previous); }
    OneThreadScope(const OneThreadScope&) = delete;
    OneThreadScope& operator=(const OneThreadScope&) = delete;

private:
    int m_previous;
    KernelThreadsScope m_kernels;  // (the torch-free kernels' threads likewise)
};

}  // namespace attnscope::engine
