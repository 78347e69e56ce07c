// test_engine's main: GoogleTest's, plus --portable-kernels, which runs every engine test on the
// portable kernels (attnscope/kernel_path.h) as a CPU without AVX2 would.

#include <attnscope/kernel_path.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--portable-kernels") == 0) {
            attnscope::engine::setKernelPath(attnscope::engine::KernelPath::Portable);
        } else {
            std::fprintf(stderr, "test_engine: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    return RUN_ALL_TESTS();
}
