// The machine's limits, printed beside each performance table (docs/PERFORMANCE.md): the FMA peak
// of one thread and of every thread together (AVX-512 and AVX2 where the CPU has them: twelve
// independent accumulators in registers) and the SGEMM rate of the BLAS the engine loads (one
// thread, square 2048 products). Run it in the same sitting as the figures it qualifies: this
// machine is shared, and its rate changes from one day to the next.
//
//   build/bench/bench_machine_peak [--threads N]

#include "base/kernels/blas_gemm.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr long kRounds = 50'000'000;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// 12 chains of FMAs (more than latency × throughput), kept in registers by the empty asm.
#define ATTNSCOPE_FMA_LOOP(NAME, BYTES, TARGET)                                                                            \
    __attribute__((target(TARGET), noinline)) float NAME(long rounds) {                                                   \
        typedef float vf __attribute__((vector_size(BYTES)));                                                             \
        const vf a = vf{} + 0.999f, b = vf{} + 0.001f;                                                                    \
        vf x0 = a, x1 = a, x2 = a, x3 = a, x4 = a, x5 = a, x6 = a, x7 = a, x8 = a, x9 = a, x10 = a, x11 = a;               \
        for (long i = 0; i < rounds; ++i) {                                                                               \
            x0 = x0 * a + b, x1 = x1 * a + b, x2 = x2 * a + b, x3 = x3 * a + b, x4 = x4 * a + b, x5 = x5 * a + b;        \
            x6 = x6 * a + b, x7 = x7 * a + b, x8 = x8 * a + b, x9 = x9 * a + b, x10 = x10 * a + b, x11 = x11 * a + b;     \
            asm volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3), "+v"(x4), "+v"(x5), "+v"(x6), "+v"(x7), "+v"(x8),  \
                         "+v"(x9), "+v"(x10), "+v"(x11));                                                                 \
        }                                                                                                                 \
        return (x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11)[0];                                         \
    }
ATTNSCOPE_FMA_LOOP(fmaAvx512, 64, "avx512f,fma")
ATTNSCOPE_FMA_LOOP(fmaAvx2, 32, "avx2,fma")

// GF/s of `threads` threads each running `loop` (flops per round: 12 FMAs of `lanes` lanes).
double fmaRate(float (*loop)(long), int lanes, int threads) {
    std::vector<std::thread> workers;
    volatile float sink = 0;
    const auto start = Clock::now();
    for (int t = 0; t < threads; ++t) workers.emplace_back([&] { sink = sink + loop(kRounds); });
    for (auto& w : workers) w.join();
    return 24.0 * lanes * static_cast<double>(kRounds) * threads / secondsSince(start) / 1e9;
}

// GF/s of one thread's SGEMM through the engine's BLAS, best of three.
double sgemmRate() {
    constexpr std::int64_t n = 2048;
    std::vector<float> a(static_cast<std::size_t>(n * n), 0.5f), b(a.size(), 0.25f), c(a.size());
    attnscope::engine::setBlasThreads(1);
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const auto start = Clock::now();
        attnscope::engine::gemmRowMajor(false, n, n, n, a.data(), n, b.data(), n, c.data(), n);
        best = std::max(best, 2.0 * n * n * n / secondsSince(start) / 1e9);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = static_cast<int>(std::thread::hardware_concurrency());
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--threads") == 0) threads = std::atoi(argv[i + 1]);
    std::printf("| probe | 1 thread GF/s | %d threads GF/s |\n|---|---:|---:|\n", threads);
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
        std::printf("| FMA peak, AVX-512 | %.0f | %.0f |\n", fmaRate(fmaAvx512, 16, 1), fmaRate(fmaAvx512, 16, threads));
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        std::printf("| FMA peak, AVX2 | %.0f | %.0f |\n", fmaRate(fmaAvx2, 8, 1), fmaRate(fmaAvx2, 8, threads));
    std::printf("| SGEMM 2048³, the engine's BLAS | %.0f | – |\n", sgemmRate());
    return 0;
}
