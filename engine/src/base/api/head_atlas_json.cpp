// The atlas's JSON form (docs/ATLAS.md).

#include <attnscope/head_atlas.h>

#include <nlohmann/json.hpp>

#include <cmath>

namespace attnscope::engine {
namespace {

nlohmann::json numberOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// A vision model's views over the picture's grid (docs/ATLAS.md, "Images").
nlohmann::json imageViewsJson(const ImageAttentionViews& v, const ImageGrid& grid) {
    nlohmann::json j;
    j["grid"] = {{"rows", grid.rows},
                 {"cols", grid.cols},
                 {"prefix", grid.prefix},
                 {"patch", grid.cell},
                 {"source_width", grid.sourceWidth},
                 {"source_height", grid.sourceHeight},
                 {"notes", grid.notes}};
    j["query"] = v.query;
    j["options"] = {{"head_fusion", headFusionName(v.options.fusion)},
                    {"discard_ratio", v.options.discardRatio},
                    {"mass_share", v.options.massShare}};
    nlohmann::json layers = nlohmann::json::array();
    for (std::int64_t l = 0; l < v.layers; ++l) {
        nlohmann::json heads = nlohmann::json::array();
        for (std::int64_t h = 0; h < v.heads; ++h) {
            const auto begin = v.queryAttention.begin() + (l * v.heads + h) * v.cells;
            heads.push_back(std::vector<float>(begin, begin + v.cells));
        }
        layers.push_back(heads);
    }
    j["query_attention"] = layers;
    j["rollout"] = v.rollout;
    if (!v.flow.empty()) j["flow"] = v.flow;
    nlohmann::json mass = nlohmann::json::array();
    for (std::int64_t h = 0; h < v.heads; ++h)
        mass.push_back(std::vector<int>(v.massCells.begin() + h * v.cells, v.massCells.begin() + (h + 1) * v.cells));
    j["mass_cells"] = mass;
    return j;
}

}  // namespace

std::string headAtlasJson(const HeadAtlas& atlas) {
    nlohmann::json j;
    j["format"] = "attnscope-atlas";
    j["version"] = 1;
    j["model"] = {{"folder", atlas.model.folder}, {"arch", atlas.model.arch},    {"layers", atlas.model.layers},
                  {"heads", atlas.model.heads},   {"head_dim", atlas.model.headDim}, {"causal", atlas.model.causal},
                  {"kv_heads", atlas.model.kvHeads > 0 ? atlas.model.kvHeads : atlas.model.heads}};
    if (!atlas.model.weightFormat.empty())  // how the weights behind every figure are stored (quantized or not)
        j["model"]["weights"] = {{"format", atlas.model.weightFormat}, {"types", atlas.model.weightTypes}};
    j["n"] = atlas.n;
    j["streaming"] = {{"sinks", atlas.streamingSinks}, {"window", atlas.streamingWindow}};
    nlohmann::json tokens = nlohmann::json::array();
    for (const auto& t : atlas.input.tokens)
        tokens.push_back({{"id", t.id}, {"text", t.text}, {"begin", t.byteBegin}, {"end", t.byteEnd}});
    j["tokens"] = tokens;
    nlohmann::json settings = nlohmann::json::array();
    for (std::size_t s = 0; s < atlas.settings.size(); ++s) {
        nlohmann::json params = nlohmann::json::object();
        for (const auto& [name, value] : atlas.settings[s].params) params[name] = formatParamValue(value);
        settings.push_back({{"label", atlas.settings[s].label},
                            {"variant", atlas.settings[s].variantId},
                            {"params", params},
                            {"note", s < atlas.settingNotes.size() ? atlas.settingNotes[s] : std::string()}});
    }
    j["coverage_settings"] = settings;
    nlohmann::json heads = nlohmann::json::array();
    for (const auto& m : atlas.metrics) {
        nlohmann::json kept = nlohmann::json::array(), error = nlohmann::json::array();
        for (double v : m.keptMass) kept.push_back(numberOrNull(v));
        for (double v : m.outputError) error.push_back(numberOrNull(v));
        heads.push_back({{"layer", m.layer},
                         {"head", m.head},
                         {"entropy", m.entropy},
                         {"mean_distance", m.meanDistance},
                         {"self_share", m.selfShare},
                         {"previous_share", m.previousShare},
                         {"next_share", m.nextShare},
                         {"special_share", m.specialShare},
                         {"first_share", m.firstShare},
                         {"sink_share", m.sinkShare},
                         {"streaming_kept", m.streamingKept},
                         {"window_only_kept", m.windowOnlyKept},
                         {"group_similarity", numberOrNull(m.groupSimilarity)},
                         {"rank90", m.rank90},
                         {"kept_mass", kept},
                         {"output_error", error},
                         {"best_window", m.bestWindow},
                         {"best_window_kept", m.bestWindowKept},
                         {"best_stride", m.bestStride},
                         {"best_stride_kept", m.bestStrideKept}});
    }
    j["heads"] = heads;
    if (!atlas.rollout.f32.empty()) {
        nlohmann::json rows = nlohmann::json::array();
        for (std::int64_t i = 0; i < atlas.n; ++i) {
            const auto begin = atlas.rollout.f32.begin() + i * atlas.n;
            rows.push_back(std::vector<float>(begin, begin + atlas.n));
        }
        j["rollout"] = rows;
    }
    if (!atlas.flow.f32.empty()) {
        nlohmann::json rows = nlohmann::json::array();
        for (std::int64_t i = 0; i < atlas.n; ++i) {
            const auto begin = atlas.flow.f32.begin() + i * atlas.n;
            rows.push_back(std::vector<float>(begin, begin + atlas.n));
        }
        j["flow"] = rows;
    }
    if (atlas.image && atlas.input.image) j["image"] = imageViewsJson(*atlas.image, *atlas.input.image);
    j["notices"] = atlas.notices;
    j["seconds"] = atlas.seconds;
    return j.dump(1);
}

}  // namespace attnscope::engine
