#include "io/image/image_defaults.h"

#include <variant>

namespace attnscope::engine {

std::optional<GridShape> plannedGrid(const ImageSpec& spec) {
    GridShape grid;
    grid.mode = spec.mode;
    if (spec.mode == ImageTokenMode::Pixels) {
        if (spec.gridRows <= 0 || spec.gridCols <= 0) return std::nullopt;
        grid.rows = spec.gridRows;
        grid.cols = spec.gridCols;
        return grid;
    }
    const std::int64_t p = spec.patch;
    if (p <= 0 || spec.image.width <= 0 || spec.image.height <= 0) return std::nullopt;
    const bool pad = spec.fit == PatchFit::Pad;
    grid.rows = pad ? (spec.image.height + p - 1) / p : spec.image.height / p;
    grid.cols = pad ? (spec.image.width + p - 1) / p : spec.image.width / p;
    grid.prefix = spec.cls ? 1 : 0;
    if (grid.rows <= 0 || grid.cols <= 0) return std::nullopt;
    return grid;
}

std::optional<std::int64_t> imageDefaultValue(ImageDefault from, const GridShape& grid) {
    switch (from) {
    case ImageDefault::None: return std::nullopt;
    case ImageDefault::PixelGridWidth: return grid.mode == ImageTokenMode::Pixels ? std::optional<std::int64_t>(grid.cols) : std::nullopt;
    case ImageDefault::GridWidth: return grid.cols;
    case ImageDefault::GridPrefix: return grid.prefix;
    }
    return std::nullopt;
}

std::string imageDefaultReason(ImageDefault from, const GridShape& grid) {
    if (from == ImageDefault::GridPrefix) return "tokens before the grid";
    return grid.mode == ImageTokenMode::Pixels ? "the image's width" : "patches across the image";
}

void applyImageDefaults(const VariantInfo& info, const GridShape& grid, ParamValues& given, std::vector<std::string>& notices) {
    std::string taken;
    for (const ParamSpec& spec : info.params) {
        if (given.count(spec.name)) continue;
        const auto value = imageDefaultValue(spec.imageDefault, grid);
        if (!value) continue;
        given[spec.name] = *value;
        if (const auto* d = std::get_if<std::int64_t>(&spec.defaultValue); d && *d == *value) continue;  // nothing to say
        taken += (taken.empty() ? "" : ", ") + spec.name + " = " + std::to_string(*value) + " (" +
                 imageDefaultReason(spec.imageDefault, grid) + ")";
    }
    if (!taken.empty()) notices.push_back(info.id + ": " + taken);
}

}  // namespace attnscope::engine
