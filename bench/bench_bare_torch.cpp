// The start-up yardstick of docs/PERFORMANCE.md ("Start-up"): a program that links Debian's
// libtorch_cpu and does nothing else. Loading and relocating the library and its dependencies is
// the least any LibTorch program pays; `attnscope-cli` start-up is measured against it.
#include <ATen/Parallel.h>

int main() {
    // (one call, so that the linker keeps the library)
    return at::get_num_threads() > 0 ? 0 : 1;
}
