// `run --image`: the image file and its token settings as the request's input.

#include "cli/cli_commands.h"
#include "common/image_load.h"

#include <charconv>

namespace attnscope::cli {

using namespace attnscope::engine;

namespace {

// "ROWSxCOLS", each a whole number from 1.
Result<std::pair<std::int64_t, std::int64_t>> parseGrid(const std::string& text) {
    const auto x = text.find_first_of("xX");
    std::int64_t rows = 0, cols = 0;
    const auto number = [](const std::string& part, std::int64_t& out) {
        const auto parsed = std::from_chars(part.data(), part.data() + part.size(), out);
        return !part.empty() && parsed.ec == std::errc() && parsed.ptr == part.data() + part.size() && out >= 1;
    };
    if (x == std::string::npos || !number(text.substr(0, x), rows) || !number(text.substr(x + 1), cols))
        return makeError(ErrorCode::InvalidArgument, "--image-grid must look like ROWSxCOLS (e.g. 32x32), got '" + text + "'");
    return std::make_pair(rows, cols);
}

}  // namespace

Result<ImageSpec> pictureSpec(const std::string& path) {
    auto picture = app::loadImageForEngine(path);
    if (!picture) return picture.error();
    ImageSpec spec;
    spec.image = std::move(picture.value());
    const auto slash = path.find_last_of('/');
    spec.name = slash == std::string::npos ? path : path.substr(slash + 1);
    return spec;
}

Result<ImageSpec> imageSpecFromOptions(const RunOptions& options) {
    auto grid = parseGrid(options.imageGrid);
    if (!grid) return grid.error();
    auto picture = pictureSpec(options.image);
    if (!picture) return picture.error();
    ImageSpec spec = std::move(picture.value());
    spec.mode = options.imageTokens == "patches" ? ImageTokenMode::Patches : ImageTokenMode::Pixels;
    spec.gridRows = grid->first;
    spec.gridCols = grid->second;
    spec.patch = options.patch;
    spec.fit = options.patchFit == "pad" ? PatchFit::Pad : PatchFit::Crop;
    spec.cls = options.cls;
    return spec;
}

}  // namespace attnscope::cli
