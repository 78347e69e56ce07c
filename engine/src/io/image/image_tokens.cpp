#include "io/image/image_tokens.h"

#include "io/image/area_resize.h"

#include <cmath>
#include <string>

namespace attnscope::engine {
namespace {

std::string size(std::int64_t width, std::int64_t height) {
    return std::to_string(width) + " × " + std::to_string(height);
}

Result<void> checkPicture(const RgbImage& image) {
    if (image.width <= 0 || image.height <= 0)
        return makeError(ErrorCode::InvalidInput, "the image is empty (" + size(image.width, image.height) + " pixels)");
    if (image.width * image.height > kMaxImagePixels)
        return makeError(ErrorCode::InvalidInput, "the image has " + size(image.width, image.height) + " pixels, more than the " +
                                                      std::to_string(kMaxImagePixels) + " taken");
    if (image.rgb.size() != static_cast<std::size_t>(3 * image.width * image.height))
        return makeError(ErrorCode::InvalidInput, "the image holds " + std::to_string(image.rgb.size()) + " values, expected 3 × " +
                                                      size(image.width, image.height));
    for (float v : image.rgb)
        if (!std::isfinite(v)) return makeError(ErrorCode::InvalidInput, "the image holds a value that is not finite");
    return {};
}

// The grid tokens of an image, after `prefixNames` tokens: labels, cells and ids.
TokenizedInput gridTokens(ImageGrid grid, const std::vector<std::string>& prefixNames) {
    TokenizedInput input;
    input.kind = grid.mode == ImageTokenMode::Pixels ? TokenizerKind::Pixels : TokenizerKind::Patches;
    grid.prefix = static_cast<std::int64_t>(prefixNames.size());
    input.tokens.reserve(static_cast<std::size_t>(grid.prefix + grid.cells()));
    for (std::size_t p = 0; p < prefixNames.size(); ++p) {
        Token token;
        token.text = prefixNames[p];
        token.id = -1 - static_cast<std::int64_t>(p);
        input.tokens.push_back(std::move(token));
    }
    for (std::int64_t r = 0; r < grid.rows; ++r)
        for (std::int64_t c = 0; c < grid.cols; ++c) {
            Token token;
            token.text = cellLabel(r, c);
            token.id = r * grid.cols + c;
            token.row = static_cast<std::int32_t>(r);
            token.col = static_cast<std::int32_t>(c);
            input.tokens.push_back(std::move(token));
        }
    input.image = std::move(grid);
    return input;
}

Result<ImageTokens> pixelTokens(const ImageSpec& spec) {
    if (spec.gridRows <= 0 || spec.gridCols <= 0)
        return makeError(ErrorCode::InvalidArgument, "image grid: rows and columns must be at least 1, got " +
                                                         size(spec.gridCols, spec.gridRows));
    if (spec.gridRows * spec.gridCols > kMaxImageGridCells)
        return makeError(ErrorCode::InvalidArgument, "image grid: " + size(spec.gridCols, spec.gridRows) + " is more than " +
                                                         std::to_string(kMaxImageGridCells) + " tokens");
    const RgbImage& image = spec.image;
    ImageGrid grid;
    grid.mode = ImageTokenMode::Pixels;
    grid.name = spec.name;
    grid.sourceHeight = image.height;
    grid.sourceWidth = image.width;
    grid.rows = grid.inputHeight = spec.gridRows;
    grid.cols = grid.inputWidth = spec.gridCols;
    grid.cell = 1;
    grid.scaleX = static_cast<double>(image.width) / static_cast<double>(spec.gridCols);
    grid.scaleY = static_cast<double>(image.height) / static_cast<double>(spec.gridRows);
    if (image.width != spec.gridCols || image.height != spec.gridRows)
        grid.notes.push_back("resized from " + size(image.width, image.height) + " to " + size(spec.gridCols, spec.gridRows) +
                             " (area average): one token per cell");
    const RgbImage small = image.width == spec.gridCols && image.height == spec.gridRows
                               ? image
                               : resizeArea(image, spec.gridRows, spec.gridCols);
    ImageTokens out;
    out.input = gridTokens(std::move(grid), {});
    out.valuesPerCell = 3;
    const std::int64_t cells = spec.gridRows * spec.gridCols;
    out.values.resize(static_cast<std::size_t>(3 * cells));
    for (std::int64_t t = 0; t < cells; ++t)
        for (int c = 0; c < 3; ++c)
            out.values[static_cast<std::size_t>(t * 3 + c)] = small.rgb[static_cast<std::size_t>(c * cells + t)];
    return out;
}

// The picture extended with black to multiples of P (Pad), or as it is (Crop: the cut ignores
// the remainder).
RgbImage fitted(const RgbImage& image, std::int64_t patch, PatchFit fit) {
    if (fit == PatchFit::Crop || (image.width % patch == 0 && image.height % patch == 0)) return image;
    RgbImage out;
    out.width = (image.width + patch - 1) / patch * patch;
    out.height = (image.height + patch - 1) / patch * patch;
    out.rgb.assign(static_cast<std::size_t>(3 * out.width * out.height), 0.0f);
    for (int c = 0; c < 3; ++c)
        for (std::int64_t y = 0; y < image.height; ++y)
            for (std::int64_t x = 0; x < image.width; ++x)
                out.rgb[static_cast<std::size_t>((c * out.height + y) * out.width + x)] = image.at(c, y, x);
    return out;
}

Result<ImageTokens> patchTokensOf(const ImageSpec& spec) {
    const RgbImage& image = spec.image;
    const std::int64_t p = spec.patch;
    if (p <= 0) return makeError(ErrorCode::InvalidArgument, "image patch size must be at least 1, got " + std::to_string(p));
    if (spec.fit == PatchFit::Crop && (p > image.width || p > image.height))
        return makeError(ErrorCode::InvalidArgument, "image patch size " + std::to_string(p) + " is larger than the image (" +
                                                         size(image.width, image.height) + "); choose a smaller patch or pad");
    const RgbImage picture = fitted(image, p, spec.fit);
    ImageTokens out = patchTokens(picture, p, spec.cls ? std::vector<std::string>{"[CLS]"} : std::vector<std::string>{});
    ImageGrid& grid = *out.input.image;
    grid.name = spec.name;
    grid.sourceHeight = image.height;
    grid.sourceWidth = image.width;
    grid.inputHeight = image.height;
    grid.inputWidth = image.width;
    const std::int64_t restX = image.width % p, restY = image.height % p;
    if (restX || restY) {
        const std::string which = restX && restY ? "right " + std::to_string(restX) + " columns and bottom " + std::to_string(restY) + " rows"
                                  : restX        ? "right " + std::to_string(restX) + " columns"
                                                 : "bottom " + std::to_string(restY) + " rows";
        grid.notes.push_back("patch " + std::to_string(p) + " does not divide " + size(image.width, image.height) + ": the " + which +
                             (spec.fit == PatchFit::Crop ? " are cropped" : " are padded with black to whole patches"));
    }
    return out;
}

}  // namespace

TokenizedInput gridTokenList(ImageGrid grid, const std::vector<std::string>& prefixNames) {
    return gridTokens(std::move(grid), prefixNames);
}

const char* imageTokenModeName(ImageTokenMode mode) { return mode == ImageTokenMode::Pixels ? "pixels" : "patches"; }
const char* patchFitName(PatchFit fit) { return fit == PatchFit::Crop ? "crop" : "pad"; }

ImageBox ImageGrid::cellBox(std::int64_t r, std::int64_t c) const {
    const auto clip = [](double v, std::int64_t limit) { return std::min(std::max(v, 0.0), static_cast<double>(limit)); };
    ImageBox box;
    box.x0 = clip((static_cast<double>(c * cell) + offsetX) * scaleX, sourceWidth);
    box.x1 = clip((static_cast<double>((c + 1) * cell) + offsetX) * scaleX, sourceWidth);
    box.y0 = clip((static_cast<double>(r * cell) + offsetY) * scaleY, sourceHeight);
    box.y1 = clip((static_cast<double>((r + 1) * cell) + offsetY) * scaleY, sourceHeight);
    return box;
}

std::string cellLabel(std::int64_t row, std::int64_t col) {
    return "(" + std::to_string(row) + ", " + std::to_string(col) + ")";
}

ImageTokens patchTokens(const RgbImage& picture, std::int64_t patch, const std::vector<std::string>& prefixNames) {
    ImageGrid grid;
    grid.mode = ImageTokenMode::Patches;
    grid.rows = picture.height / patch;
    grid.cols = picture.width / patch;
    grid.cell = patch;
    grid.sourceHeight = grid.inputHeight = picture.height;
    grid.sourceWidth = grid.inputWidth = picture.width;
    ImageTokens out;
    out.valuesPerCell = 3 * patch * patch;
    out.values.resize(static_cast<std::size_t>(grid.cells() * out.valuesPerCell));
    float* v = out.values.data();
    for (std::int64_t r = 0; r < grid.rows; ++r)
        for (std::int64_t c = 0; c < grid.cols; ++c)
            for (int ch = 0; ch < 3; ++ch)
                for (std::int64_t y = 0; y < patch; ++y)
                    for (std::int64_t x = 0; x < patch; ++x) *v++ = picture.at(ch, r * patch + y, c * patch + x);
    out.input = gridTokens(std::move(grid), prefixNames);
    return out;
}

Result<ImageTokens> imageTokens(const ImageSpec& spec) {
    auto picture = checkPicture(spec.image);
    if (!picture) return picture.error();
    if (spec.mode == ImageTokenMode::Pixels) return pixelTokens(spec);
    return patchTokensOf(spec);
}

}  // namespace attnscope::engine
