// The pattern variants against `full`, measured in the same process (issue 3, "Benchmark"):
// n = 1k..32k, 8 heads, d = 64, float32, random Q/K/V, no dense diagnostics. Prints Markdown
// tables (docs/PERFORMANCE.md quotes them).
//
//   bench_sparse_attention [--n 1024,2048,...] [--variants full,longformer,...]
//                          [--full-max-n 16384] [--min-time 1.0] [--max-calls 20] [--threads N]
//                          [--param NAME=VALUE ...] [--stages] [--repeat R] [--smoke]
//
// --param NAME=VALUE sets a parameter of every selected case but `full` (e.g. causal=false);
// true / false, integers and [1,2,3] lists of integers are typed, anything else is a string.
//
// --threads N: engines with N intra-op threads and OpenBLAS limited to N threads (default: the
// engine's default, all cores). --threads 1 compares per-core efficiency, which other processes
// on a shared machine distort least (each variant then uses one core, and `full` no longer waits
// on a descheduled second BLAS thread).
//
// Per case: median wall time of the steady-state calls (after one warm-up call on the same
// engine), useful-FLOP rate = 4·d·(pattern entries, per head) / time, the engine's own
// counters.flops rate, `full`'s rate at the same n, the speed-up over `full`, counters.peakBytes,
// the process RSS growth during the first (cold) call of a fresh engine, and minor page faults
// per steady-state call (getrusage ru_minflt), and the median process CPU time (all threads) of
// one steady-state call with the useful-FLOP rate per CPU-second relative to `full`'s (a ratio
// that other processes on a shared machine distort much less than wall time), and the median
// time of the "pattern" stage (listing the CSR pattern the result carries).
//
// --repeat R: the whole sweep R times in a row (rounds), so that a burst of load from other
// processes disturbs one round rather than a whole case. The table then gives each case's median
// over the rounds (times, rates, faults), and "rate / full" is the median of the rounds' ratios
// (each round's variant against that round's `full`), with their range in the last column.

#include "bench_progress.h"

#include "common/omp_wait_policy.h"

#include <attnscope/engine.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <malloc.h>
#include <random>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace attnscope::engine;

namespace {

constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kDim = 64;

struct Case {
    std::string name;  // table label
    std::string id;    // registry id
    ParamValues params;
};

std::vector<Case> allCases() {
    return {
        {"full", "full", {}},
        {"longformer w=256", "longformer", {{"window", std::int64_t{256}}}},
        {"bigbird b=64 r=3", "bigbird", {{"block", std::int64_t{64}}, {"random", std::int64_t{3}}}},
        {"sparse_strided l=128", "sparse_strided", {{"stride", std::int64_t{128}}}},
        {"sparse_fixed l=128 c=16", "sparse_fixed", {{"block", std::int64_t{128}}, {"summary", std::int64_t{16}}}},
        // Content-based and approximate variants (issue 4), with the benchmark settings.
        {"linear", "linear", {}},
        {"performer m=256", "performer", {{"nb_features", std::int64_t{256}}}},
        {"linformer k=256", "linformer", {{"k", std::int64_t{256}}}},
        {"routing w=256", "routing", {{"window_size", std::int64_t{256}}}},
        {"reformer h=8 c=64", "reformer", {{"n_hashes", std::int64_t{8}}, {"chunk_len", std::int64_t{64}}}},
    };
}

// NAME=VALUE from --param: true / false, an integer, [1,2,3] (integers), else a string.
std::pair<std::string, ParamValue> parseParam(const std::string& text) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "--param needs NAME=VALUE, got '%s'\n", text.c_str());
        std::exit(2);
    }
    const std::string name = text.substr(0, eq), value = text.substr(eq + 1);
    if (value == "true" || value == "false") return {name, value == "true"};
    if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {  // [1,2,3]: a list of integers
        std::vector<std::int64_t> list;
        std::stringstream items(value.substr(1, value.size() - 2));
        for (std::string item; std::getline(items, item, ',');)
            if (!item.empty()) list.push_back(std::stoll(item));
        return {name, list};
    }
    char* end = nullptr;
    const long long number = std::strtoll(value.c_str(), &end, 10);
    if (!value.empty() && end && *end == '\0') return {name, static_cast<std::int64_t>(number)};
    return {name, value};
}

// CPU time (user + system) of the whole process, all threads, in seconds.
double processCpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

long minorFaults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

std::int64_t rssBytes() {
    std::ifstream statm("/proc/self/statm");
    std::int64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

// Samples the resident set every millisecond while alive; peak() is the largest value seen.
class RssSampler {
public:
    RssSampler() : m_peak(rssBytes()), m_thread([this] {
        while (!m_stop.load()) {
            const std::int64_t now = rssBytes();
            std::int64_t seen = m_peak.load();
            while (now > seen && !m_peak.compare_exchange_weak(seen, now)) {}
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }) {}
    ~RssSampler() { stop(); }
    std::int64_t stop() {
        if (m_thread.joinable()) {
            m_stop = true;
            m_thread.join();
            const std::int64_t now = rssBytes();
            if (now > m_peak) m_peak = now;
        }
        return m_peak.load();
    }

private:
    std::atomic<std::int64_t> m_peak;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

PlainTensor randomTensor(std::int64_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> values(static_cast<std::size_t>(kHeads * n * kDim));
    for (auto& x : values) x = dist(gen);
    return PlainTensor::fromF32({kHeads, n, kDim}, std::move(values));
}

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

struct Measured {
    bool ok = false;
    std::string error;
    double seconds = 0;        // median steady-state wall time of one call
    double usefulFlops = 0;    // 4·d per pattern entry per head
    double counterFlops = 0;   // counters.flops
    std::uint64_t peakBytes = 0;
    double rssDeltaMiB = 0;    // RSS growth during the cold call
    double faultsPerCall = 0;
    double cpuSeconds = 0;     // median process CPU time (all threads) of one steady-state call
    double patternSeconds = 0; // median "pattern" stage (listing the pattern) of one steady-state call
    int calls = 0;
};

// Entries of every head (duplicates counted), from the rows' keys: the useful work.
double patternEntriesAllHeads(const AttentionResult& r) {
    double entries = 0;
    for (int h = 0; h < r.heads; ++h) entries += static_cast<double>(r.weights->entries(h));
    return entries;
}

int g_threads = 0;  // --threads (0 = the engine's default)
bool g_stages = false;  // --stages: each call's stage times on stderr

Measured measure(const Case& c, const QkvTensors& qkv, double minTime, int maxCalls) {
    Measured m;
    RunRequest request;
    request.source = qkv;
    request.variants.push_back(VariantRequest{c.id, c.params});
    request.denseLimit = 0;  // no n x m diagnostics: the attention alone is timed
    malloc_trim(0);
    EngineOptions options;
    options.threads = g_threads;
    auto engine = Engine::create(options);
    if (!engine) {
        m.error = engine.error().message;
        return m;
    }
    // Cold call on a fresh engine: its RSS growth is the memory this case needs.
    {
        const std::int64_t before = rssBytes();
        RssSampler sampler;
        auto cold = (*engine)->run(request);
        const std::int64_t peak = sampler.stop();
        if (!cold) {
            m.error = cold.error().message;
            return m;
        }
        m.rssDeltaMiB = static_cast<double>(peak - before) / (1 << 20);
        const AttentionResult& r = (*cold)->results[0];
        m.usefulFlops = 4.0 * static_cast<double>(kDim) * patternEntriesAllHeads(r);
        m.counterFlops = r.counters.flops;
        m.peakBytes = r.counters.peakBytes;
    }
    std::vector<double> times, cpuTimes, patternTimes;
    double total = 0;
    long faults = 0;
    while ((total < minTime || times.size() < 2) && static_cast<int>(times.size()) < maxCalls) {
        const long f0 = minorFaults();
        const double c0 = processCpuSeconds();
        const auto t0 = std::chrono::steady_clock::now();
        auto result = (*engine)->run(request);
        const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        cpuTimes.push_back(processCpuSeconds() - c0);
        faults += minorFaults() - f0;
        if (!result) {
            m.error = result.error().message;
            return m;
        }
        times.push_back(dt);
        total += dt;
        double pattern = 0;
        for (const auto& st : (*result)->results[0].counters.stages)
            if (st.stage == "pattern") pattern += st.seconds;
        if (g_stages) {
            std::fprintf(stderr, "%s n=%lld:", c.name.c_str(), static_cast<long long>(qkv.q.shape[1]));
            for (const auto& st : (*result)->results[0].counters.stages)
                std::fprintf(stderr, " %s %.1f ms", st.stage.c_str(), st.seconds * 1e3);
            std::fprintf(stderr, " (call %.1f ms)\n", dt * 1e3);
        }
        patternTimes.push_back(pattern);
        // `result` is released here, as a caller that keeps only the last result would.
    }
    std::sort(times.begin(), times.end());
    std::sort(cpuTimes.begin(), cpuTimes.end());
    m.seconds = times[times.size() / 2];
    m.cpuSeconds = cpuTimes[cpuTimes.size() / 2];
    std::sort(patternTimes.begin(), patternTimes.end());
    m.patternSeconds = patternTimes[patternTimes.size() / 2];
    m.calls = static_cast<int>(times.size());
    m.faultsPerCall = static_cast<double>(faults) / static_cast<double>(times.size());
    m.ok = true;
    return m;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// One case at one n over the rounds: the medians the table prints.
struct Summary {
    Measured m;           // medians over the rounds (the first round's cold-call numbers)
    double rate = 0;      // useful GFLOP/s of the median time
    double ratio = 0;     // median over the rounds of (rate / full's rate in the same round)
    double ratioMin = 0, ratioMax = 0;
    double cpuRatio = 0;  // the same for the rates per CPU-second
    double fullRate = 0, fullTime = 0;  // `full`'s medians at this n (0: not measured)
};

// rounds[r] of one case against fullRounds[r] of `full` at the same n (empty when skipped).
Summary summarise(const std::vector<Measured>& rounds, const std::vector<Measured>& fullRounds) {
    Summary s;
    s.m = rounds.front();
    std::vector<double> seconds, cpu, pattern, faults, ratios, cpuRatios, fullRates, fullTimes;
    for (std::size_t r = 0; r < rounds.size(); ++r) {
        const Measured& m = rounds[r];
        seconds.push_back(m.seconds);
        cpu.push_back(m.cpuSeconds);
        pattern.push_back(m.patternSeconds);
        faults.push_back(m.faultsPerCall);
        if (r < fullRounds.size()) {
            const Measured& f = fullRounds[r];
            const double fullRate = f.usefulFlops / f.seconds, fullCpuRate = f.usefulFlops / std::max(f.cpuSeconds, 1e-9);
            ratios.push_back(m.usefulFlops / m.seconds / fullRate);
            cpuRatios.push_back(m.usefulFlops / std::max(m.cpuSeconds, 1e-9) / fullCpuRate);
            fullRates.push_back(fullRate / 1e9);
            fullTimes.push_back(f.seconds);
        }
    }
    s.m.seconds = median(seconds);
    s.m.cpuSeconds = median(cpu);
    s.m.patternSeconds = median(pattern);
    s.m.faultsPerCall = median(faults);
    s.rate = s.m.usefulFlops / s.m.seconds / 1e9;
    if (!ratios.empty()) {
        s.ratio = median(ratios);
        s.ratioMin = *std::min_element(ratios.begin(), ratios.end());
        s.ratioMax = *std::max_element(ratios.begin(), ratios.end());
        s.cpuRatio = median(cpuRatios);
        s.fullRate = median(fullRates);
        s.fullTime = median(fullTimes);
    }
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    attnscope::app::ensurePassiveOpenMpWait(argv);
    std::vector<std::int64_t> sizes = {1024, 2048, 4096, 8192, 16384, 32768};
    std::vector<std::string> wanted;
    std::int64_t fullMax = 16384;
    double minTime = 1.0;
    int maxCalls = 20;
    int rounds = 1;
    bool quiet = false;
    std::vector<std::pair<std::string, ParamValue>> overrides;
    std::string overrideLabel;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        const auto next = [&]() -> std::string {
            if (a + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", arg.c_str());
                std::exit(2);
            }
            return argv[++a];
        };
        if (arg == "--n") {
            sizes.clear();
            for (const auto& s : splitList(next())) sizes.push_back(std::stoll(s));
        } else if (arg == "--variants") {
            wanted = splitList(next());
        } else if (arg == "--full-max-n") {
            fullMax = std::stoll(next());
        } else if (arg == "--min-time") {
            minTime = std::stod(next());
        } else if (arg == "--threads") {
            g_threads = std::stoi(next());
        } else if (arg == "--stages") {
            g_stages = true;
        } else if (arg == "--param") {
            const std::string text = next();
            overrides.push_back(parseParam(text));
            overrideLabel += " " + text;
        } else if (arg == "--repeat") {
            rounds = std::max(1, std::stoi(next()));
        } else if (arg == "--max-calls") {
            maxCalls = std::max(2, std::stoi(next()));
        } else if (arg == "--quiet") {
            quiet = true;
        } else if (arg == "--smoke") {
            sizes = {1024};
            minTime = 0;
            maxCalls = 2;
        } else {
            std::fprintf(stderr,
                         "usage: bench_sparse_attention [--n LIST] [--variants LIST] [--full-max-n N] "
                         "[--min-time SECONDS] [--max-calls N] [--param NAME=VALUE ...] [--threads N] [--stages] "
                         "[--repeat R] [--smoke] [--quiet]\n");
            return 2;
        }
    }
    std::vector<Case> cases;
    for (auto c : allCases()) {
        if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), c.id) == wanted.end()) continue;
        if (c.id != "full" && !overrides.empty()) {  // --param: every case but the baseline
            for (const auto& [name, value] : overrides) c.params[name] = value;
            c.name += overrideLabel;
        }
        cases.push_back(c);
    }

    {
        EngineOptions options;
        options.threads = g_threads;
        if (!Engine::create(options)) return 1;  // sets LibTorch's intra-op threads, as every engine does
    }
    if (g_threads > 0) {  // OpenBLAS's own pool (used by `full`) to the same count
        if (auto set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(g_threads);
    }
    const auto blasThreads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    const char* wait = std::getenv("OMP_WAIT_POLICY");
    std::printf("<!-- bench_sparse_attention: %lld heads, d = %lld, float32, no dense diagnostics; "
                "%d intra-op threads, %d OpenBLAS threads, %u hardware threads, OMP_WAIT_POLICY=%s -->\n\n",
                static_cast<long long>(kHeads), static_cast<long long>(kDim), at::get_num_threads(),
                blasThreads ? blasThreads() : -1, std::thread::hardware_concurrency(), wait ? wait : "(unset)");
    std::printf("| variant | n | time (ms) | useful GFLOP/s | counted GFLOP/s | full GFLOP/s | rate / full | "
                "speed-up vs full | peakBytes (MiB) | RSS Δ cold (MiB) | faults/call | calls | CPU time (ms) | "
                "CPU rate / full | pattern (ms) | rate / full, rounds |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    std::fflush(stdout);

    std::map<std::string, std::map<std::int64_t, double>> times;
    bool failed = false;
    // measured[n index][case][round]; a case that fails or is skipped has no rounds (notes says why)
    std::vector<std::vector<std::vector<Measured>>> measured(sizes.size(),
                                                             std::vector<std::vector<Measured>>(cases.size()));
    std::vector<std::vector<std::string>> notes(sizes.size(), std::vector<std::string>(cases.size()));
    attnscope::bench::BenchProgress progress(static_cast<long>(rounds) * static_cast<long>(sizes.size() * cases.size()), quiet);
    for (int round = 0; round < rounds; ++round)
        for (std::size_t ni = 0; ni < sizes.size(); ++ni) {
            const std::int64_t n = sizes[ni];
            const QkvTensors qkv{randomTensor(n, 1), randomTensor(n, 2), randomTensor(n, 3)};
            for (std::size_t ci = 0; ci < cases.size(); ++ci) {
                const Case& c = cases[ci];
                if (c.id == "full" && n > fullMax) {
                    notes[ni][ci] = "skipped (n > --full-max-n " + std::to_string(fullMax) + ")";
                    continue;
                }
                if (!notes[ni][ci].empty()) continue;  // failed in an earlier round
                progress.start(c.name + " n=" + std::to_string(n));
                const Measured m = measure(c, qkv, c.id == "full" ? std::min(minTime, 0.5) : minTime, maxCalls);
                if (!m.ok) {
                    notes[ni][ci] = "error: " + m.error;
                    measured[ni][ci].clear();
                    failed = true;
                    continue;
                }
                measured[ni][ci].push_back(m);
                progress.finish();
                if (rounds > 1)
                    std::fprintf(stderr, "round %d/%d: %s n=%lld %.1f ms\n", round + 1, rounds, c.name.c_str(),
                                 static_cast<long long>(n), m.seconds * 1e3);
            }
            if (round + 1 < rounds) continue;
            // the last round at this n: its rows
            const auto fullIt = std::find_if(cases.begin(), cases.end(), [](const Case& c) { return c.id == "full"; });
            const std::vector<Measured> none;
            const std::vector<Measured>& fullRounds =
                fullIt == cases.end() ? none : measured[ni][static_cast<std::size_t>(fullIt - cases.begin())];
            for (std::size_t ci = 0; ci < cases.size(); ++ci) {
                const Case& c = cases[ci];
                const std::vector<Measured>& mine = measured[ni][ci];
                if (mine.empty()) {
                    std::printf("| %s | %lld | %s | | | | | | | | | | | | | |\n", c.name.c_str(),
                                static_cast<long long>(n), notes[ni][ci].c_str());
                    continue;
                }
                const Summary s = summarise(mine, fullRounds);
                const Measured& m = s.m;
                times[c.name][n] = m.seconds;
                const bool haveFull = s.fullRate > 0;
                const std::string range = !haveFull            ? "—"
                                          : mine.size() == 1 ? fmt("%.2f", s.ratio)
                                                             : fmt("%.2f", s.ratioMin) + "–" + fmt("%.2f", s.ratioMax);
                std::printf("| %s | %lld | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n",
                            c.name.c_str(), static_cast<long long>(n), fmt("%.1f", m.seconds * 1e3).c_str(),
                            fmt("%.1f", s.rate).c_str(), fmt("%.1f", m.counterFlops / m.seconds / 1e9).c_str(),
                            haveFull ? fmt("%.1f", s.fullRate).c_str() : "—",
                            haveFull ? fmt("%.2f", s.ratio).c_str() : "—",
                            haveFull ? fmt("%.1f×", s.fullTime / m.seconds).c_str() : "—",
                            fmt("%.1f", static_cast<double>(m.peakBytes) / (1 << 20)).c_str(),
                            fmt("%.1f", m.rssDeltaMiB).c_str(), fmt("%.0f", m.faultsPerCall).c_str(), m.calls,
                            fmt("%.1f", m.cpuSeconds * 1e3).c_str(), haveFull ? fmt("%.2f", s.cpuRatio).c_str() : "—",
                            fmt("%.1f", m.patternSeconds * 1e3).c_str(), range.c_str());
                std::fflush(stdout);
            }
        }

    // log-log time slope between the smallest n >= 4096 and the largest n measured
    std::printf("\n| variant | slope (log-log time) | from n | to n |\n|---|---:|---:|---:|\n");
    for (const auto& c : cases) {
        const auto it = times.find(c.name);
        if (it == times.end()) continue;
        const auto& t = it->second;
        auto lo = t.lower_bound(4096);
        if (lo == t.end()) lo = t.begin();
        const auto hi = std::prev(t.end());
        if (lo->first >= hi->first) continue;
        const double slope = std::log(hi->second / lo->second) / std::log(static_cast<double>(hi->first) / lo->first);
        std::printf("| %s | %.2f | %lld | %lld |\n", c.name.c_str(), slope, static_cast<long long>(lo->first),
                    static_cast<long long>(hi->first));
    }
    return failed ? 1 : 0;
}
