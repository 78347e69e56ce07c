// Checkpoint timings (issue 6): open a BERT-base-sized checkpoint (random weights, 440 MB), one
// forward pass at 512 tokens keeping every attention, and the head atlas with the default
// coverage settings. Prints a Markdown table for docs/PERFORMANCE_MODELS.md.

#include "bench_progress.h"

#include <attnscope/engine.h>

#include "../tests/support/tiny_model.h"
#include "common/omp_wait_policy.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace attnscope::engine;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

[[noreturn]] void die(const std::string& message) {
    std::cerr << "bench_model: " << message << "\n";
    std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    const bool smoke = argc > 1 && std::strcmp(argv[1], "--smoke") == 0;
    attnscope::bench::BenchProgress progress(5, attnscope::bench::quietFlag(argc, argv));
    attnscope::testing::TinyModelSpec spec;
    spec.arch = "bert";
    if (smoke) {
        spec.vocab = 1000, spec.hidden = 64, spec.layers = 2, spec.heads = 4, spec.inter = 256, spec.positions = 128;
    } else {
        spec.vocab = 30522, spec.hidden = 768, spec.layers = 12, spec.heads = 12, spec.inter = 3072, spec.positions = 512;
    }
    const std::int64_t n = spec.positions;
    const fs::path dir = fs::temp_directory_path() / ("attnscope-bench-model-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    progress.start("write the checkpoint");
    auto start = std::chrono::steady_clock::now();
    {
        const auto model = attnscope::testing::makeTinyModel(spec);
        attnscope::testing::writeTinyModel(model, dir, "bert.");
    }
    const double writeSeconds = secondsSince(start);

    auto engine = Engine::create();
    if (!engine) die(engine.error().message);
    progress.start("open");
    start = std::chrono::steady_clock::now();
    auto info = engine.value()->openModel(dir.string());
    const double openSeconds = secondsSince(start);
    if (!info) die(info.error().message);

    ModelInput input;
    for (std::int64_t i = 0; i < n; ++i) input.ids.push_back((i * 7919) % spec.vocab);
    progress.start("first forward");
    start = std::chrono::steady_clock::now();
    auto first = engine.value()->forwardModel(input);
    const double firstForward = secondsSince(start);
    if (!first) die(first.error().message);
    progress.start("warm forward");
    start = std::chrono::steady_clock::now();
    auto second = engine.value()->forwardModel(input);
    const double warmForward = secondsSince(start);
    if (!second) die(second.error().message);

    AtlasRequest atlasRequest;
    atlasRequest.ids = input.ids;
    progress.start("atlas");
    start = std::chrono::steady_clock::now();
    auto atlas = engine.value()->analyzeModel(atlasRequest);
    const double atlasSeconds = secondsSince(start);
    if (!atlas) die(atlas.error().message);
    std::size_t applicable = 0;
    for (const auto& note : atlas.value()->settingNotes) applicable += note.empty();
    fs::remove_all(dir);
    progress.finish();

    std::cout << "| step | seconds | target |\n|---|---:|---|\n";
    std::cout << "| write the checkpoint (" << info->weightBytes / (1 << 20) << " MiB, not timed by the target) | "
              << writeSeconds << " | — |\n";
    std::cout << "| open (config, headers, shape checks; weights mapped) | " << openSeconds << " | < 1 s |\n";
    std::cout << "| first forward, " << n << " tokens, all attentions (reads the weights) | " << firstForward << " | < 3 s |\n";
    std::cout << "| warm forward, " << n << " tokens, all attentions | " << warmForward << " | < 3 s |\n";
    std::cout << "| atlas: forward + " << atlas.value()->settings.size() << " coverage settings (" << applicable
              << " applicable) on " << spec.layers << " x " << spec.heads << " heads + rollout | " << atlasSeconds
              << " | < 15 s |\n";
    return 0;
}
