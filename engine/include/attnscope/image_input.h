#pragma once
// Images as input (DESIGN.md "Inputs beside text"): the engine takes a decoded RGB picture as
// floats (the app decodes files with Qt's image readers) and turns it into pixel or patch tokens
// that remember where they are in the picture (docs/IMAGES.md).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnscope::engine {

/// A decoded picture: channels R, G, B in [0, 1], planar [3, height, width], row-major.
struct RgbImage {
    std::int64_t height = 0, width = 0;
    std::vector<float> rgb;  ///< 3 · height · width values
    float at(int channel, std::int64_t y, std::int64_t x) const {
        return rgb[static_cast<std::size_t>((channel * height + y) * width + x)];
    }
};

enum class ImageTokenMode {
    Pixels,   ///< the picture resized (area average) to rows × cols; one token per cell, raster order
    Patches,  ///< P × P patches in raster order (ViT), optionally after a CLS token
};
const char* imageTokenModeName(ImageTokenMode mode);  ///< "pixels", "patches"

/// Patches mode when P does not divide the picture: drop the right and bottom remainder, or
/// extend the picture with black to the next multiple of P.
enum class PatchFit { Crop, Pad };
const char* patchFitName(PatchFit fit);  ///< "crop", "pad"

/// How an image becomes tokens (random projections; a ViT model brings its own preprocessing).
struct ImageSpec {
    RgbImage image;
    std::string name;  ///< the file's name, for titles and the request record
    ImageTokenMode mode = ImageTokenMode::Pixels;
    std::int64_t gridRows = 32, gridCols = 32;  ///< pixels mode
    std::int64_t patch = 16;                     ///< patches mode: P
    PatchFit fit = PatchFit::Crop;               ///< patches mode
    bool cls = false;                            ///< patches mode: a CLS token before the patches
};

/// A rectangle of the source picture in its pixel coordinates: [x0, x1) × [y0, y1).
struct ImageBox {
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

/// Where a run's tokens sit in the picture. Tokens [0, prefix) are extra tokens (CLS, DeiT's
/// distillation token) with no place; token prefix + r · cols + c is grid cell (r, c), the input
/// picture's pixels [c·cell, (c+1)·cell) × [r·cell, (r+1)·cell). The input picture is what the
/// cells are cut from: the rows × cols grid itself in pixels mode (cell 1), the picture after a
/// model's resize and crop in patches mode (cell P). Input pixel (x, y) is source pixel
/// ((x + offsetX) · scaleX, (y + offsetY) · scaleY).
struct ImageGrid {
    ImageTokenMode mode = ImageTokenMode::Pixels;
    std::string name;
    std::int64_t sourceHeight = 0, sourceWidth = 0;  ///< the picture as given
    std::int64_t rows = 0, cols = 0;                 ///< the token grid
    std::int64_t prefix = 0;                         ///< tokens before the grid
    std::int64_t cell = 1;                           ///< input pixels per cell side (P; 1 for pixels)
    std::int64_t inputHeight = 0, inputWidth = 0;
    double offsetX = 0, offsetY = 0, scaleX = 1, scaleY = 1;
    /// What was done to the picture on its way to tokens, in words ("resized from 640 × 480 to
    /// 224 × 224 (bilinear)", "the right 3 columns are cropped"); shown by the views.
    std::vector<std::string> notes;

    std::int64_t cells() const { return rows * cols; }
    bool isGridToken(std::int64_t token) const { return token >= prefix && token < prefix + cells(); }
    /// Cell (r, c) in source pixels, clipped to the source picture (a padded cell is partly outside).
    ImageBox cellBox(std::int64_t r, std::int64_t c) const;
};

/// The token grid an image spec gives, known before anything is tokenized.
struct GridShape {
    ImageTokenMode mode = ImageTokenMode::Pixels;
    std::int64_t rows = 0, cols = 0, prefix = 0;
};

/// The grid `spec` tokenizes to (only the picture's size is read); nullopt when the spec is
/// invalid (tokenizing says why).
std::optional<GridShape> plannedGrid(const ImageSpec& spec);

/// Largest picture the engine takes (pixels); the app refuses bigger files before decoding.
constexpr std::int64_t kMaxImagePixels = 64LL * 1024 * 1024;
/// Largest token grid of the pixels mode (rows · cols).
constexpr std::int64_t kMaxImageGridCells = 1LL << 20;

}  // namespace attnscope::engine
