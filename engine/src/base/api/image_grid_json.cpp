#include "base/api/image_grid_json.h"

namespace attnscope::engine {

nlohmann::json imageGridJson(const ImageGrid& grid) {
    return {{"mode", imageTokenModeName(grid.mode)},
            {"name", grid.name},
            {"source_width", grid.sourceWidth},
            {"source_height", grid.sourceHeight},
            {"rows", grid.rows},
            {"cols", grid.cols},
            {"prefix", grid.prefix},
            {"cell", grid.cell},
            {"input_width", grid.inputWidth},
            {"input_height", grid.inputHeight},
            {"offset", {grid.offsetX, grid.offsetY}},
            {"scale", {grid.scaleX, grid.scaleY}},
            {"notes", grid.notes}};
}

Result<ImageGrid> imageGridFromJson(const nlohmann::json& j) {
    ImageGrid grid;
    const std::string mode = j.at("mode").get<std::string>();
    if (mode != "pixels" && mode != "patches") return makeError(ErrorCode::InvalidInput, "image mode '" + mode + "' is not pixels or patches");
    grid.mode = mode == "pixels" ? ImageTokenMode::Pixels : ImageTokenMode::Patches;
    grid.name = j.value("name", std::string());
    grid.sourceWidth = j.at("source_width").get<std::int64_t>();
    grid.sourceHeight = j.at("source_height").get<std::int64_t>();
    grid.rows = j.at("rows").get<std::int64_t>();
    grid.cols = j.at("cols").get<std::int64_t>();
    grid.prefix = j.at("prefix").get<std::int64_t>();
    grid.cell = j.at("cell").get<std::int64_t>();
    grid.inputWidth = j.at("input_width").get<std::int64_t>();
    grid.inputHeight = j.at("input_height").get<std::int64_t>();
    grid.offsetX = j.at("offset").at(0).get<double>();
    grid.offsetY = j.at("offset").at(1).get<double>();
    grid.scaleX = j.at("scale").at(0).get<double>();
    grid.scaleY = j.at("scale").at(1).get<double>();
    grid.notes = j.value("notes", std::vector<std::string>());
    if (grid.sourceWidth < 1 || grid.sourceHeight < 1 || grid.rows < 1 || grid.cols < 1 || grid.prefix < 0 || grid.cell < 1 ||
        !(grid.scaleX > 0) || !(grid.scaleY > 0))
        return makeError(ErrorCode::InvalidInput, "attnscope.image has a size that is not positive");
    return grid;
}

}  // namespace attnscope::engine
