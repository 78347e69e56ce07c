// A Switch layer of E experts against the dense FFN of one expert's size (Fedus et al. 2021 §2),
// through measureSwitchFfnCost — what the Cost tab's "Switch FFN vs dense" page runs.
//
//   bench_switch_ffn [--tokens 256,1024,4096,16384] [--experts 8] [--capacity-factor 1.25]
//
// Prints a Markdown table: tokens, ms per pass of each, the ratio, weights and drops.

#include "bench_progress.h"

#include <attnscope/switch_ffn_cost.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace attnscope::engine;

int main(int argc, char** argv) {
    std::vector<std::int64_t> counts = {256, 1024, 4096, 16384};
    SwitchFfnCostSettings settings;
    bool quiet = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--tokens") {
            counts.clear();
            std::stringstream s(next());
            for (std::string item; std::getline(s, item, ',');) counts.push_back(std::stoll(item));
        } else if (a == "--experts") settings.experts = std::stoll(next());
        else if (a == "--capacity-factor") settings.capacityFactor = std::stod(next());
        else if (a == "--smoke") counts = {64}, settings.repeats = 1;
        else if (a == "--quiet") quiet = true;
        else {
            std::fprintf(stderr, "usage: bench_switch_ffn [--tokens A,B] [--experts E] [--capacity-factor c] [--smoke] [--quiet]\n");
            return 2;
        }
    }
    std::printf("| tokens | dense FFN ms | Switch (E = %lld, c = %.2f) ms | Switch / dense | dropped | weights dense / Switch MiB |\n",
                static_cast<long long>(settings.experts), settings.capacityFactor);
    std::printf("|---:|---:|---:|---:|---:|---:|\n");
    attnscope::bench::BenchProgress progress(static_cast<long>(counts.size()), quiet);
    for (std::int64_t n : counts) {
        progress.start(std::to_string(n) + " tokens");
        auto p = measureSwitchFfnCost(settings, n);
        progress.finish();
        if (!p) {
            std::fprintf(stderr, "%lld tokens: %s\n", static_cast<long long>(n), p.error().message.c_str());
            return 1;
        }
        std::printf("| %lld | %.3f | %.3f | %.2f× | %lld | %.2f / %.2f |\n", static_cast<long long>(n), 1e3 * p->denseSeconds,
                    1e3 * p->switchSeconds, p->ratio(), static_cast<long long>(p->dropped),
                    static_cast<double>(p->denseWeightBytes) / (1 << 20), static_cast<double>(p->switchWeightBytes) / (1 << 20));
    }
    return 0;
}
