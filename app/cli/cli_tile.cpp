// `attnscope-cli tile`: a rectangle of one head's exact weights, read back from a result file
// alone (docs/RESULT_FORMAT.md): what the views and exports read, printed as JSON or CSV.

#include "cli/cli_commands.h"

#include <attnscope/result_file.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace attnscope::cli {

using namespace attnscope::engine;

// "A:B" (B exclusive), or "A" for one index; empty = the whole range [0, size).
bool parseIndexRange(const std::string& text, std::int64_t size, std::int64_t& a, std::int64_t& b) {
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

namespace {

// The rectangle is computed and printed a band of rows at a time: memory stays about 8 MiB
// whatever was asked for (a 6000 × 10000 tile printed 1.9 GB of JSON from memory before).
std::int64_t bandRows(std::int64_t cols) { return std::clamp<std::int64_t>((std::int64_t{1} << 20) / std::max<std::int64_t>(cols, 1), 1, 256); }

template <class Row>
void forEachBand(const AttentionResult& r, int head, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1,
                 bool reasons, const Row& row) {
    for (std::int64_t b0 = r0; b0 < r1; b0 += bandRows(c1 - c0)) {
        const std::int64_t b1 = std::min(r1, b0 + bandRows(c1 - c0));
        const WeightTile t = r.weights->tile(head, b0, b1, c0, c1, reasons);
        for (std::int64_t i = b0; i < b1; ++i) row(t, i);
    }
}

void streamCsv(const AttentionResult& r, int head, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    std::string line;
    forEachBand(r, head, r0, r1, c0, c1, false, [&](const WeightTile& t, std::int64_t i) {
        line.clear();
        for (std::int64_t j = c0; j < c1; ++j) {
            char text[32];
            std::snprintf(text, sizeof text, "%.9g", static_cast<double>(t.at(i, j)));
            if (j > c0) line += ',';
            line += text;
        }
        line += '\n';
        std::cout << line;
    });
}

// The same JSON as one nlohmann document would give: {"head", "keys", "reasons", "rows",
// "variant", "weights"} (keys in that order), weights as doubles, reasons as name lists.
void streamJson(const AttentionResult& r, int head, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    std::cout << "{\"head\":" << head << ",\"keys\":[" << c0 << "," << c1 << "],\"reasons\":[";
    std::string line;
    forEachBand(r, head, r0, r1, c0, c1, true, [&](const WeightTile& t, std::int64_t i) {
        line = i > r0 ? ",[" : "[";
        for (std::int64_t j = c0; j < c1; ++j) {
            const std::size_t cell = static_cast<std::size_t>((i - t.r0) * (c1 - c0) + (j - c0));
            line += j > c0 ? ",[" : "[";
            bool first = true;
            for (int b = 0; b < kPatternReasonCount; ++b)
                if (t.reasons[cell] & (1u << b)) {
                    line += (first ? "\"" : ",\"") + std::string(patternReasonName(static_cast<PatternReason>(b))) + "\"";
                    first = false;
                }
            line += ']';
        }
        std::cout << line << ']';
    });
    std::cout << "],\"rows\":[" << r0 << "," << r1 << "],\"variant\":" << nlohmann::json(r.variantId).dump() << ",\"weights\":[";
    forEachBand(r, head, r0, r1, c0, c1, false, [&](const WeightTile& t, std::int64_t i) {
        line = i > r0 ? ",[" : "[";
        for (std::int64_t j = c0; j < c1; ++j) {
            if (j > c0) line += ',';
            line += nlohmann::json(static_cast<double>(t.at(i, j))).dump();
        }
        std::cout << line << ']';
    });
    std::cout << "]}\n";
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
    if (!parseIndexRange(options.rows, r.n, r0, r1)) {
        printError("--rows '" + options.rows + "' must look like A:B (queries A to B-1) or A");
        return kExitUsage;
    }
    if (!parseIndexRange(options.keys, r.m, c0, c1)) {
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
    // (printed a band at a time, but 2^26 cells are already about 2 GB of JSON: ask for less)
    constexpr std::int64_t kMaxCells = std::int64_t{1} << 26;
    if ((r1 - r0) * (c1 - c0) > kMaxCells) {
        printError("the tile has " + std::to_string((r1 - r0) * (c1 - c0)) + " cells, more than " +
                   std::to_string(kMaxCells) + ": ask for a smaller rectangle");
        return kExitUsage;
    }
    try {
        if (options.format == "csv")
            streamCsv(r, options.head, r0, r1, c0, c1);
        else
            streamJson(r, options.head, r0, r1, c0, c1);
    } catch (const std::exception& e) {  // (a rule the reader lacks: a clear error, never an abort)
        std::cout.flush();
        printError(options.file + ": its weights cannot be recomputed: " + e.what());
        return kExitFailure;
    }
    return 0;
}

}  // namespace attnscope::cli
