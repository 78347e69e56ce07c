// `attnscope-cli tile`: a rectangle of one head's exact weights, read back from a result file
// alone (docs/RESULT_FORMAT.md): what the views and exports read, printed as JSON or CSV.

#include "cli/cli_commands.h"

#include <attnscope/result_file.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

// "A:B" (B exclusive), or "A" for one index; empty = the whole range [0, size).
bool parseRange(const std::string& text, std::int64_t size, std::int64_t& a, std::int64_t& b) {
    if (text.empty()) {
        a = 0;
        b = size;
        return true;
    }
    const auto colon = text.find(':');
    try {
        std::size_t used = 0;
        a = std::stoll(text.substr(0, colon), &used);
        if (used != (colon == std::string::npos ? text.size() : colon)) return false;
        if (colon == std::string::npos) {
            b = a + 1;
            return true;
        }
        const std::string rest = text.substr(colon + 1);
        b = std::stoll(rest, &used);
        return used == rest.size();
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace

int tileCommand(const TileOptions& options) {
    auto run = readResultFile(options.file);
    if (!run) {
        printError(run.error().message);
        return kExitFailure;
    }
    const AttentionResult& r = (*run)->results[0];
    std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    if (!parseRange(options.rows, r.n, r0, r1)) {
        printError("--rows '" + options.rows + "' must look like A:B (queries A to B-1) or A");
        return kExitUsage;
    }
    if (!parseRange(options.keys, r.m, c0, c1)) {
        printError("--keys '" + options.keys + "' must look like C:D (keys C to D-1) or C");
        return kExitUsage;
    }
    if (options.head < 0 || options.head >= r.heads || r0 < 0 || r1 > r.n || r0 > r1 || c0 < 0 || c1 > r.m || c0 > c1) {
        printError("the tile head " + std::to_string(options.head) + ", rows " + std::to_string(r0) + ":" +
                   std::to_string(r1) + ", keys " + std::to_string(c0) + ":" + std::to_string(c1) +
                   " is outside the result (" + std::to_string(r.heads) + " heads, " + std::to_string(r.n) +
                   " queries, " + std::to_string(r.m) + " keys)");
        return kExitUsage;
    }
    constexpr std::int64_t kMaxCells = std::int64_t{1} << 26;  // 256 MiB of weights: ask for less
    if ((r1 - r0) * (c1 - c0) > kMaxCells) {
        printError("the tile has " + std::to_string((r1 - r0) * (c1 - c0)) + " cells, more than " +
                   std::to_string(kMaxCells) + ": ask for a smaller rectangle");
        return kExitUsage;
    }
    const WeightTile t = r.weights->tile(options.head, r0, r1, c0, c1, /*withReasons=*/true);
    if (options.format == "csv") {
        for (std::int64_t i = r0; i < r1; ++i) {
            for (std::int64_t j = c0; j < c1; ++j) {
                char text[32];
                std::snprintf(text, sizeof text, "%.9g", static_cast<double>(t.at(i, j)));
                std::cout << (j > c0 ? "," : "") << text;
            }
            std::cout << "\n";
        }
        return 0;
    }
    nlohmann::json out;
    out["variant"] = r.variantId;
    out["head"] = options.head;
    out["rows"] = {r0, r1};
    out["keys"] = {c0, c1};
    nlohmann::json weights = nlohmann::json::array(), reasons = nlohmann::json::array();
    for (std::int64_t i = r0; i < r1; ++i) {
        nlohmann::json wr = nlohmann::json::array(), rr = nlohmann::json::array();
        for (std::int64_t j = c0; j < c1; ++j) {
            const std::size_t cell = static_cast<std::size_t>((i - r0) * (c1 - c0) + (j - c0));
            wr.push_back(t.weights[cell]);
            nlohmann::json names = nlohmann::json::array();
            for (int b = 0; b < kPatternReasonCount; ++b)
                if (t.reasons[cell] & (1u << b)) names.push_back(patternReasonName(static_cast<PatternReason>(b)));
            rr.push_back(names);
        }
        weights.push_back(wr);
        reasons.push_back(rr);
    }
    out["weights"] = weights;
    out["reasons"] = reasons;
    std::cout << out.dump() << "\n";
    return 0;
}

}  // namespace attnscope::cli
