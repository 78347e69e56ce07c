// `full` (the baseline of every variant) against the machine's SGEMM rate, in one process.
// Counters: GFLOP/s of the useful work, and minor page faults per steady-state call.
//   bench_full_attention [--benchmark_filter=...]

#include "common/omp_wait_policy.h"

#include <attnscope/engine.h>

#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <random>
#include <sys/resource.h>

using namespace attnscope::engine;

namespace {

constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kDim = 64;

long minorFaults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

PlainTensor randomTensor(std::int64_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> values(static_cast<std::size_t>(kHeads * n * kDim));
    for (auto& x : values) x = dist(gen);
    return PlainTensor::fromF32({kHeads, n, kDim}, std::move(values));
}

Engine& engine() {
    static std::unique_ptr<Engine> instance = [] {
        auto e = Engine::create({});
        if (!e) std::abort();
        return std::move(e.value());
    }();
    return *instance;
}

void fullAttention(benchmark::State& state, bool causal) {
    const std::int64_t n = state.range(0);
    RunRequest request;
    request.source = QkvTensors{randomTensor(n, 1), randomTensor(n, 2), randomTensor(n, 3)};
    request.variants.push_back(VariantRequest{"full", {{"causal", causal}}});
    request.denseLimit = 0;  // no n x m diagnostics: the attention alone is timed
    double flops = 0;
    { auto warm = engine().run(request); if (!warm) { state.SkipWithError(warm.error().message.c_str()); return; } }
    const long faultsBefore = minorFaults();
    for (auto _ : state) {
        auto result = engine().run(request);
        if (!result) {
            state.SkipWithError(result.error().message.c_str());
            return;
        }
        flops = (*result)->results[0].counters.flops;
        benchmark::DoNotOptimize(result);
    }
    const double iterations = static_cast<double>(state.iterations());
    state.counters["GFLOPs"] = benchmark::Counter(flops * iterations / 1e9, benchmark::Counter::kIsRate);
    state.counters["faults_per_call"] = static_cast<double>(minorFaults() - faultsBefore) / iterations;
}

// The same two products per head as `full` ([n, d] x [d, n] and [n, n] x [n, d]), unblocked,
// into preallocated outputs: what the BLAS alone achieves on these shapes.
void sgemmBaseline(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    at::Tensor q = at::randn({n, kDim}), k = at::randn({n, kDim}), v = at::randn({n, kDim});
    at::Tensor scores = at::empty({n, n}), out = at::empty({n, kDim});
    for (auto _ : state) {
        for (std::int64_t h = 0; h < kHeads; ++h) {
            at::mm_out(scores, q, k.t());
            at::mm_out(out, scores, v);
        }
        benchmark::DoNotOptimize(out.data_ptr<float>());
    }
    const double flops = 4.0 * kHeads * n * n * kDim;
    state.counters["GFLOPs"] =
        benchmark::Counter(flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(fullAttention, bidirectional, false)->Arg(1024)->Arg(2048)->Arg(4096)->Arg(8192)->Arg(16384)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(fullAttention, causal, true)->Arg(1024)->Arg(4096)->Arg(16384)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(sgemmBaseline)->Arg(1024)->Arg(2048)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

namespace attnscope::engine {
std::int64_t softmaxRowsInPlace(float* data, std::int64_t rows, std::int64_t cols, std::int64_t rowStride,
                                float scale, std::uint8_t* rowEmpty, float* rowShift, float* rowSum);
}

namespace {
// The softmax kernel alone on a [rows, n] block: elements per second.
void softmaxKernel(benchmark::State& state) {
    const std::int64_t n = state.range(0), rows = 64;
    at::Tensor block = at::randn({rows, n});
    at::Tensor copy = block.clone();
    for (auto _ : state) {
        copy.copy_(block);
        attnscope::engine::softmaxRowsInPlace(copy.data_ptr<float>(), rows, n, n, 0.125f, nullptr, nullptr, nullptr);
    }
    state.SetItemsProcessed(state.iterations() * rows * n);
}
void blockGemm(benchmark::State& state) {
    const std::int64_t n = state.range(0), rows = state.range(1);
    at::Tensor q = at::randn({rows, kDim}), k = at::randn({n, kDim}), v = at::randn({n, kDim});
    at::Tensor s = at::empty({rows, n}), out = at::empty({rows, kDim});
    for (auto _ : state) {
        at::mm_out(s, q, k.t());
        at::mm_out(out, s, v);
    }
    state.counters["GFLOPs"] = benchmark::Counter(4.0 * rows * n * kDim * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
}  // namespace
BENCHMARK(softmaxKernel)->Arg(4096);
BENCHMARK(blockGemm)->Args({4096, 32})->Args({4096, 128})->Args({4096, 256})->Args({4096, 512})->UseRealTime();
