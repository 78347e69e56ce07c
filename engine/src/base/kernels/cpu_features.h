#pragma once
// Run-time dispatch to the hand-written AVX2/FMA kernels: the engine is built for plain x86-64,
// so each kernel compiles its AVX2 body with a target attribute and checks the CPU once.
// KernelPath::Portable (attnscope/kernel_path.h, EngineOptions::kernels) makes the kernels take
// their portable paths, as on a CPU without AVX2: the test suite runs them that way too.

#include <attnscope/kernel_path.h>

#if defined(__GNUC__) && defined(__x86_64__)
#define ATTNSCOPE_HAVE_AVX2_KERNELS 1
#define ATTNSCOPE_AVX2_FMA_TARGET __attribute__((target("avx2,fma")))

namespace attnscope::engine {

inline bool haveAvx2Fma() {
    static const bool cpuHas = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return cpuHas && kernelPath() != KernelPath::Portable;
}

/// AVX-512 Foundation (16 floats a register, 32 registers), unless the kernel path says less.
inline bool haveAvx512() {
    static const bool cpuHas = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return cpuHas && kernelPath() == KernelPath::Fastest;
}

}  // namespace attnscope::engine
#endif
