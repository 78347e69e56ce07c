#pragma once
// Which of the engine's kernels run: the hand-written AVX-512 and AVX2/FMA ones where the CPU has
// them, the AVX2 ones even where it has AVX-512, or the portable ones everywhere (what a CPU without
// AVX2 runs; the test suite runs every engine test on the fastest and the portable paths, and the
// kernels' own tests every path the CPU has). One choice per process, made before the first run:
// the kernels read it at dispatch.

namespace attnscope::engine {

enum class KernelPath {
    Fastest,   ///< AVX-512, else AVX2/FMA where the CPU supports them, portable otherwise
    Portable,  ///< the portable kernels only
    Avx2,      ///< AVX2/FMA at most: the AVX-512 kernels skipped (what a CPU without them runs)
};

void setKernelPath(KernelPath path);
KernelPath kernelPath();

}  // namespace attnscope::engine
