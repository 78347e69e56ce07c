#pragma once
// An image as tokens (docs/IMAGES.md): pixels mode resizes the picture to the chosen grid by
// area average, one token per cell in raster order; patches mode cuts P × P patches (cropping or
// padding the remainder), one token per patch in raster order, after a CLS token when asked.
// Each token records its grid cell; the grid maps cells back to the source picture.

#include <attnscope/result.h>
#include <attnscope/types.h>

#include <cstdint>
#include <vector>

namespace attnscope::engine {

struct ImageTokens {
    TokenizedInput input;  ///< tokens "(r, c)" (and "[CLS]"), input.image set
    /// Per grid cell, in raster order: pixels mode the cell's R, G, B; patches mode the patch's
    /// 3 · P · P values channel-major ([3, P, P], as a Conv2d patch embedding reads them).
    std::vector<float> values;
    std::int64_t valuesPerCell = 0;
};

/// Checks the spec (sizes, grid, patch) and tokenizes; errors name the field at fault.
Result<ImageTokens> imageTokens(const ImageSpec& spec);

/// Patch tokens of a picture already prepared (a ViT model's resized and normalised input):
/// `picture` [3, H, W] with P dividing neither necessarily (the remainder cropped), `prefix`
/// extra tokens before the grid named `prefixNames`. The grid's source mapping is left to the caller.
ImageTokens patchTokens(const RgbImage& picture, std::int64_t patch, const std::vector<std::string>& prefixNames);

/// The tokens of `grid`: `prefixNames` first (grid.prefix is set to their count), then one
/// "(r, c)" token per cell in raster order; input.image is the grid.
TokenizedInput gridTokenList(ImageGrid grid, const std::vector<std::string>& prefixNames);

/// "(r, c)", the label of a grid token.
std::string cellLabel(std::int64_t row, std::int64_t col);

}  // namespace attnscope::engine
