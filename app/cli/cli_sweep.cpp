// `attnscope-cli sweep`: the Long Range Arena-style table for users. Each (variant, n) runs in a
// fresh child process (`attnscope-cli run`, as a user's run) on the same random Q, K, V; the
// sweep records its wall time and peak RSS (wait4) and writes a CSV and a Markdown table with the
// speed and memory relative to `full` at the same n.

#include "cli/cli_commands.h"

#include <attnscope/memory_budget.h>

#include <attnscope/atomic_file.h>
#include <attnscope/safetensors.h>
#include <attnscope/variant_catalog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

namespace fs = std::filesystem;

struct SweepVariant {
    std::string label;                ///< as given: "longformer:window=256"
    std::string id;                   ///< registry id
    std::vector<std::string> params;  ///< "window=256"
};

struct SweepCell {
    std::string status = "ok";  ///< ok | over budget | failed
    double seconds = 0;
    double peakMiB = 0;
    std::string message;
};

// "ID[:p=v,...],...": a token with ':' or without '=' starts a variant; list values are written
// with ';' between elements (global=0;7), which become the schema's commas.
Result<std::vector<SweepVariant>> parseVariants(const std::string& text) {
    // (getline drops the empty entry after a trailing comma: "full," is refused here)
    if (!text.empty() && text.back() == ',') return makeError(ErrorCode::InvalidArgument, "--variants has an empty entry (a trailing comma)");
    std::vector<SweepVariant> out;
    std::stringstream s(text);
    std::string token;
    while (std::getline(s, token, ',')) {
        if (token.empty()) return makeError(ErrorCode::InvalidArgument, "--variants has an empty entry");
        const auto colon = token.find(':');
        if (colon != std::string::npos || token.find('=') == std::string::npos) {
            SweepVariant v;
            v.id = token.substr(0, colon);
            v.label = v.id;
            out.push_back(v);
            if (colon == std::string::npos) continue;
            token = token.substr(colon + 1);
        }
        if (out.empty()) return makeError(ErrorCode::InvalidArgument, "--variants must start with a variant id");
        std::replace(token.begin(), token.end(), ';', ',');
        out.back().params.push_back(token);
        out.back().label += (out.back().label.find(':') == std::string::npos ? ":" : ",") + token;
    }
    if (out.empty()) return makeError(ErrorCode::InvalidArgument, "--variants lists no variant");
    return out;
}

Result<std::vector<std::int64_t>> parseSizes(const std::string& text) {
    if (!text.empty() && text.back() == ',') return makeError(ErrorCode::InvalidArgument, "--n has an empty entry (a trailing comma)");
    std::vector<std::int64_t> out;
    std::stringstream s(text);
    std::string token;
    while (std::getline(s, token, ',')) {
        char* end = nullptr;
        const long long v = std::strtoll(token.c_str(), &end, 10);
        if (token.empty() || *end != '\0' || v < 1 || v > (1ll << 24))
            return makeError(ErrorCode::InvalidArgument, "--n '" + token + "' must be a token count in [1, 16777216]");
        out.push_back(v);
    }
    if (out.empty()) return makeError(ErrorCode::InvalidArgument, "--n lists no size");
    return out;
}

// Random normal q, k, v [heads, n, d] (seeded) written once per n, shared by every variant.
Result<std::string> writeInputs(const fs::path& dir, std::int64_t n, const SweepOptions& o) {
    const fs::path path = dir / ("qkv_" + std::to_string(n) + ".safetensors");
    std::mt19937_64 gen(o.seed + static_cast<std::uint64_t>(n));
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<PlainTensor> parts;
    for (int t = 0; t < 3; ++t) {
        std::vector<float> values(static_cast<std::size_t>(o.heads) * static_cast<std::size_t>(n) * static_cast<std::size_t>(o.headDim));
        for (auto& x : values) x = dist(gen);
        parts.push_back(PlainTensor::fromF32({o.heads, n, o.headDim}, std::move(values)));
    }
    auto written = writeSafetensors(path.string(), {{"q", &parts[0]}, {"k", &parts[1]}, {"v", &parts[2]}}, {});
    if (!written) return written.error();
    return path.string();
}

// One child `run`: wall time from fork to exit, peak RSS from wait4, stderr kept for the reason.
SweepCell runChild(const std::string& self, const SweepVariant& v, const std::string& input, const fs::path& dir,
                   const SweepOptions& o) {
    std::vector<std::string> args = {self, "run", "--variant", v.id, "--qkv", input, "--dense-limit", "0",
                                     "--quiet", "--threads", std::to_string(o.threads), "--out", (dir / "result.safetensors").string()};
    for (const auto& p : v.params) {
        args.push_back("--param");
        args.push_back(p);
    }
    if (o.memoryBudget > 0) {
        args.push_back("--memory-budget");
        args.push_back(std::to_string(o.memoryBudget));
    }
    const fs::path errPath = dir / "stderr.txt";
    SweepCell cell;
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        std::FILE* err = std::freopen(errPath.c_str(), "w", stderr);
        (void)err;
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(self.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    struct rusage usage {};
    if (pid < 0 || wait4(pid, &status, 0, &usage) < 0) {
        cell.status = "failed";
        cell.message = "could not start the child process";
        return cell;
    }
    cell.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    cell.peakMiB = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::ifstream in(errPath);
        std::getline(in, cell.message);
        cell.status = cell.message.find("memory budget") != std::string::npos ? "over budget" : "failed";
    }
    return cell;
}

std::string fixed(double v, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, v);
    return text;
}

// The Long Range Arena's speed-up over vanilla at 4K tokens (the variant's catalog entry).
std::string lraSpeedup(const std::string& id) {
    const VariantInfo* info = findVariantInfo(id);
    return info && !info->lraSpeedup.empty() ? info->lraSpeedup : "—";
}

// Every variant known and every NAME=VALUE checked against its schema before anything runs.
Result<void> checkVariants(const std::vector<SweepVariant>& variants) {
    for (const SweepVariant& v : variants) {
        const VariantInfo* info = findVariantInfo(v.id);
        if (!info) {
            std::string known;
            for (const auto& i : variantCatalog()) known += (known.empty() ? "" : ", ") + i.id;
            return makeError(ErrorCode::InvalidArgument, "--variants: unknown variant '" + v.id + "' (registered: " + known + ")");
        }
        ParamValues given;
        for (const std::string& p : v.params) {
            const auto eq = p.find('=');
            const ParamSpec* spec = eq == std::string::npos ? nullptr : info->findParam(p.substr(0, eq));
            if (!spec)
                return makeError(ErrorCode::InvalidArgument,
                                 "--variants " + v.label + ": '" + p + "' is not NAME=VALUE of a parameter of " + v.id);
            auto value = parseParamValue(*spec, p.substr(eq + 1));
            if (!value) return makeError(ErrorCode::InvalidArgument, "--variants " + v.label + ": " + value.error().message);
            given[spec->name] = *value;
        }
        if (auto resolved = resolveParams(*info, given); !resolved)
            return makeError(ErrorCode::InvalidArgument, "--variants " + v.label + ": " + resolved.error().message);
    }
    return {};
}

// A quoted CSV field (quotes doubled, line breaks as spaces).
std::string csvField(const std::string& text) {
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    return out + "\"";
}

using SweepCells = std::map<std::pair<std::size_t, std::int64_t>, SweepCell>;

// Every (variant, n) cell, each in a fresh process, on inputs written to a scratch folder.
// Returns the exit status: 0, or kExitFailure when an input could not be written.
int measureCells(const std::vector<SweepVariant>& variants, const std::vector<std::int64_t>& sizes,
                 const SweepOptions& options, const fs::path& dir, SweepCells& cells) {
    std::error_code ec;
    const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
    const std::size_t total = variants.size() * sizes.size();
    std::size_t done = 0;
    const std::uint64_t budget = memoryBudgetOr(options.memoryBudget);
    for (const std::int64_t n : sizes) {
        // The inputs are made in memory before they are written: over the budget, this size is
        // skipped (every variant's cell says why) before anything is allocated.
        const std::uint64_t inputBytes = 3ull * static_cast<std::uint64_t>(options.heads) * static_cast<std::uint64_t>(n) *
                                         static_cast<std::uint64_t>(options.headDim) * sizeof(float);
        if (inputBytes > budget) {
            for (std::size_t vi = 0; vi < variants.size(); ++vi) {
                SweepCell& cell = cells[{vi, n}];
                cell.status = "over budget";
                cell.message = "its q, k, v take " + formatBytes(inputBytes) + ", over the memory budget of " + formatBytes(budget);
                ++done;
            }
            if (!options.quiet) std::cerr << "sweep: n=" << n << " skipped: its inputs are over the memory budget\n";
            continue;
        }
        auto input = writeInputs(dir, n, options);
        if (!input) {
            printError(input.error().message);
            return kExitFailure;
        }
        for (std::size_t vi = 0; vi < variants.size(); ++vi) {
            const SweepVariant& v = variants[vi];
            SweepCell cell = runChild(self, v, *input, dir, options);
            cells[{vi, n}] = cell;
            ++done;
            if (!options.quiet)
                std::cerr << "sweep: [" << done << "/" << total << "] " << v.label << " n=" << n << ": "
                          << (cell.status == "ok" ? fixed(cell.seconds, 3) + " s, " + fixed(cell.peakMiB, 0) + " MiB"
                                                  : cell.status + (cell.message.empty() ? "" : " (" + cell.message + ")"))
                          << std::endl;
        }
        fs::remove(*input, ec);
    }
    return 0;
}

// The CSV and the Markdown table (with numbered notes for cells that did not run); ratios are
// against variant 0, the exact reference, at the same n.
std::pair<std::string, std::string> formatTables(const std::vector<SweepVariant>& variants,
                                                 const std::vector<std::int64_t>& sizes, SweepCells& cells) {
    std::ostringstream csv, md, notes;
    csv << "variant,n,status,wall_s,peak_rss_mib,speedup_vs_full,memory_vs_full,note\n";
    md << "| variant | n | wall s | peak RSS MiB | speed-up vs full | memory vs full | LRA at 4K (TPU) |\n"
       << "|---|---:|---:|---:|---:|---:|---|\n";
    int noteCount = 0;
    for (std::size_t vi = 0; vi < variants.size(); ++vi)
        for (const std::int64_t n : sizes) {
            const auto it = cells.find({vi, n});
            if (it == cells.end()) continue;
            const SweepCell& c = it->second;
            const SweepCell& full = cells[{0, n}];
            const bool ratios = c.status == "ok" && full.status == "ok";
            const std::string speed = ratios ? fixed(full.seconds / c.seconds, 2) : "";
            const std::string memory = ratios ? fixed(c.peakMiB / full.peakMiB, 2) : "";
            const std::string& label = variants[vi].label;
            csv << csvField(label) << "," << n << "," << c.status << "," << (c.status == "ok" ? fixed(c.seconds, 4) : "")
                << "," << (c.status == "ok" ? fixed(c.peakMiB, 1) : "") << "," << speed << "," << memory << ","
                << csvField(c.message) << "\n";
            std::string shown = c.status == "ok" ? fixed(c.seconds, 3) : c.status;
            if (c.status != "ok" && !c.message.empty()) {
                shown += " [" + std::to_string(++noteCount) + "]";
                notes << "\n[" << noteCount << "] " << label << ", n = " << n << ": " << c.message << "\n";
            }
            md << "| " << label << " | " << n << " | " << shown << " | " << (c.status == "ok" ? fixed(c.peakMiB, 0) : "")
               << " | " << (speed.empty() ? "" : speed + "×") << " | " << (memory.empty() ? "" : memory + "×") << " | "
               << lraSpeedup(variants[vi].id) << " |\n";
        }
    md << notes.str();
    return {csv.str(), md.str()};
}

// Both files or neither; without --markdown the table goes to stdout. Returns the exit status.
int writeTables(const SweepOptions& options, const std::string& csv, const std::string& md) {
    auto csvFile = StagedFile::stage(options.out, csv);
    if (!csvFile) {
        printError(csvFile.error().message);
        return kExitFailure;
    }
    std::optional<StagedFile> mdFile;
    if (!options.markdown.empty()) {
        auto staged = StagedFile::stage(options.markdown, md);
        if (!staged) {
            printError(staged.error().message);
            return kExitFailure;
        }
        mdFile.emplace(std::move(staged.value()));
    }
    if (auto done = csvFile->commit(); !done) {
        printError(done.error().message);
        return kExitFailure;
    }
    if (!mdFile) {
        std::cout << md;
        return 0;
    }
    if (auto done = mdFile->commit(); !done) {
        std::remove(options.out.c_str());
        printError(done.error().message);
        return kExitFailure;
    }
    return 0;
}

}  // namespace

int sweepCommand(const SweepOptions& options) {
    auto variants = parseVariants(options.variants);
    if (!variants) {
        printError(variants.error().message);
        return kExitUsage;
    }
    auto sizes = parseSizes(options.sizes);
    if (!sizes) {
        printError(sizes.error().message);
        return kExitUsage;
    }
    if (auto checked = checkVariants(*variants); !checked) {
        printError(checked.error().message);
        return kExitUsage;
    }
    // (the outputs are checked before the runs, which may take long)
    for (const std::string* path : {&options.out, &options.markdown}) {
        if (path->empty() && path == &options.markdown) continue;
        if (auto usable = checkOutputPath(*path); !usable) {
            printError(usable.error().message);
            return kExitFailure;
        }
    }
    // The exact reference first at every n: the denominator of the ratios.
    const std::string& exact = exactReference().id;
    const auto reference = std::find_if(variants->begin(), variants->end(), [&](const SweepVariant& v) { return v.id == exact; });
    if (reference == variants->end()) variants->insert(variants->begin(), SweepVariant{exact, exact, {}});
    else std::rotate(variants->begin(), reference, reference + 1);
    std::error_code ec;
    const fs::path dir = fs::temp_directory_path(ec) / ("attnscope-sweep-" + std::to_string(getpid()));
    fs::create_directories(dir, ec);
    if (ec) {
        printError("cannot create the sweep's scratch folder " + dir.string() + ": " + ec.message());
        return kExitFailure;
    }
    SweepCells cells;
    const int status = measureCells(*variants, *sizes, options, dir, cells);
    fs::remove_all(dir, ec);
    const auto [csv, md] = formatTables(*variants, *sizes, cells);
    const int written = writeTables(options, csv, md);
    return written != 0 ? written : status;
}

}  // namespace attnscope::cli
