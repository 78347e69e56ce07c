#pragma once
// Which of the engine's kernels run: the hand-written AVX2/FMA ones where the CPU has them, or the
// portable ones everywhere (what a CPU without AVX2 runs; the test suite runs every engine test
// both ways). One choice per process, made before the first run: the kernels read it at dispatch.

namespace attnscope::engine {

enum class KernelPath {
    Fastest,   ///< AVX2/FMA where the CPU supports them, portable otherwise
    Portable,  ///< the portable kernels only
};

void setKernelPath(KernelPath path);
KernelPath kernelPath();

}  // namespace attnscope::engine
