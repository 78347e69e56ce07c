// Transformer-XL's evaluation speed (Dai et al. 2019, Table 9): per predicted token, a model
// that reads the text in segments with cached memory against the same model recomputing a sliding
// window of the same attention length from scratch for every token (a vanilla model's
// evaluation), through measureTransfoXlEvalSpeed — what the Cost tab's evaluation-speed plot runs.
//
//   bench_transfo_xl_eval [--lengths 64,128,256,512] [--segment 16] [--tokens 1024] [--windows 32]
//
// Prints a Markdown table: attention length, ms per token for each, the ratio.

#include "bench_progress.h"

#include <attnscope/transfo_xl_eval_speed.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace attnscope::engine;

namespace {

std::vector<std::int64_t> parseList(const std::string& text) {
    std::vector<std::int64_t> out;
    std::stringstream s(text);
    for (std::string item; std::getline(s, item, ',');) out.push_back(std::stoll(item));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::int64_t> lengths = {64, 128, 256, 512};
    std::int64_t segment = 16, tokens = 1024, windows = 32;
    bool smoke = false, quiet = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--lengths") lengths = parseList(next());
        else if (a == "--segment") segment = std::stoll(next());
        else if (a == "--tokens") tokens = std::stoll(next());
        else if (a == "--windows") windows = std::stoll(next());
        else if (a == "--smoke") smoke = true;
        else if (a == "--quiet") quiet = true;
        else {
            std::fprintf(stderr, "usage: bench_transfo_xl_eval [--lengths A,B] [--segment L] [--tokens N] [--windows K] [--smoke] [--quiet]\n");
            return 2;
        }
    }
    if (smoke) lengths = {32}, tokens = 64, windows = 4;
    EvalSpeedSettings settings;
    settings.segment = segment;
    settings.tokens = tokens;
    settings.windows = windows;
    std::printf("| attention length | Transformer-XL ms/token (segment %lld, memory = length) | vanilla ms/token (window recomputed) | vanilla / XL |\n",
                static_cast<long long>(segment));
    std::printf("|---:|---:|---:|---:|\n");
    attnscope::bench::BenchProgress progress(static_cast<long>(lengths.size()), quiet);
    for (std::int64_t length : lengths) {
        progress.start("attention length " + std::to_string(length));
        auto point = measureTransfoXlEvalSpeed(settings, length);
        progress.finish();
        if (!point) {
            std::fprintf(stderr, "length %lld: %s\n", static_cast<long long>(length), point.error().message.c_str());
            return 1;
        }
        std::printf("| %lld | %.3f | %.3f | %.1f× |\n", static_cast<long long>(length), 1e3 * point->memorySecondsPerToken,
                    1e3 * point->recomputeSecondsPerToken, point->ratio());
    }
    return 0;
}
