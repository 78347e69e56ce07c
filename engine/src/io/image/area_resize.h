#pragma once
// Area resampling of an RGB picture to any size: each output pixel is the mean of the source
// pixels it covers, fractional pixels weighted by the part covered (OpenCV's INTER_AREA; on an
// exact divisor, the plain mean of each block). Both directions are separable: the horizontal
// pass then the vertical, in double precision.

#include <attnscope/image_input.h>

#include <cstdint>

namespace attnscope::engine {

RgbImage resizeArea(const RgbImage& image, std::int64_t height, std::int64_t width);

}  // namespace attnscope::engine
