#pragma once
// Resampling as Pillow's Image.resize computes it on 8-bit RGB pictures (what Hugging Face's image
// processors call): a separable convolution, the horizontal pass then the vertical, each with
// the filter stretched by the scale when reducing (antialiasing), coefficients normalised then
// rounded to 22-bit fixed point, every pass rounded and clipped to 8 bits. A pass whose size does
// not change is skipped.

#include <attnscope/image_input.h>

#include <cstdint>

namespace attnscope::engine {

/// Pillow's filter numbers as preprocessor_config.json's `resample` gives them.
enum class PilFilter { Nearest = 0, Lanczos = 1, Bilinear = 2, Bicubic = 3, Box = 4, Hamming = 5 };
const char* pilFilterName(PilFilter filter);  ///< "bilinear", "bicubic", ...

/// `image` holds k/255 values (an 8-bit picture); they are rounded to bytes first. The result
/// holds k/255 values too.
RgbImage resizePil(const RgbImage& image, std::int64_t height, std::int64_t width, PilFilter filter);

}  // namespace attnscope::engine
