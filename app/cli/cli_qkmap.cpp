// `attnscope-cli qkmap`: AttentionViz's query–key map of one head as CSV, read back from a result
// file alone (attnscope/qk_map.h): every query and key placed in one plane.

#include "cli/cli_commands.h"

#include <attnscope/atomic_file.h>
#include <attnscope/qk_map.h>
#include <attnscope/result_file.h>

#include <cstdio>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

// A CSV field: quoted, its quotes doubled.
std::string csvField(const std::string& text) {
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + '"';
}

std::string tokenText(const RunResult& run, std::int64_t index) {
    return index < static_cast<std::int64_t>(run.input.tokens.size()) ? run.input.tokens[static_cast<std::size_t>(index)].text : std::string();
}

}  // namespace

int qkmapCommand(const QkMapCliOptions& options) {
    if (options.method != "pca" && options.method != "tsne" && options.method != "umap") {
        printError("--method " + options.method + ": pca, tsne or umap");
        return kExitUsage;
    }
    auto run = readResultFile(options.file);
    if (!run) {
        printError(run.error().message);
        return kExitFailure;
    }
    QkMapOptions mapOptions;
    mapOptions.translateKeys = !options.noTranslate;
    mapOptions.scale = !options.noScale;
    if (options.method == "tsne") mapOptions.method = QkMapOptions::Method::Tsne;
    if (options.method == "umap") mapOptions.method = QkMapOptions::Method::Umap;
    mapOptions.neighbors = options.neighbors;
    mapOptions.minDist = options.minDist;
    mapOptions.perplexity = options.perplexity;
    mapOptions.seed = options.seed;
    auto map = queryKeyMap(**run, static_cast<std::size_t>(options.result), options.head, mapOptions);
    if (!map) {
        printError(map.error().message);
        return kExitUsage;
    }
    std::string text = "kind,index,token,x,y\n";
    for (const QkMapPoint& p : map->points) {
        char xy[64];
        std::snprintf(xy, sizeof xy, "%.9g,%.9g", static_cast<double>(p.x), static_cast<double>(p.y));
        text += std::string(p.isKey ? "key," : "query,") + std::to_string(p.index) + ',' + csvField(tokenText(**run, p.index)) + ',' + xy + '\n';
    }
    auto written = writeFileAtomically(options.out, text);
    if (!written) {
        printError(written.error().message);
        return kExitFailure;
    }
    if (mapOptions.method == QkMapOptions::Method::Tsne)
        std::printf("%s: %zu points (queries and keys of head %d) placed by t-SNE (perplexity %g, seed %llu), scale %.4g\n",
                    options.out.c_str(), map->points.size(), options.head, options.perplexity,
                    static_cast<unsigned long long>(options.seed), map->scale);
    else if (mapOptions.method == QkMapOptions::Method::Umap)
        std::printf("%s: %zu points (queries and keys of head %d) placed by UMAP (%d neighbours, min_dist %g, seed %llu), scale %.4g\n",
                    options.out.c_str(), map->points.size(), options.head, options.neighbors, options.minDist,
                    static_cast<unsigned long long>(options.seed), map->scale);
    else
        std::printf("%s: %zu points (queries and keys of head %d); the axes hold %.1f %% and %.1f %% of their variance, scale %.4g\n",
                    options.out.c_str(), map->points.size(), options.head, 100.0 * map->explained[0], 100.0 * map->explained[1],
                    map->scale);
    return 0;
}

}  // namespace attnscope::cli
