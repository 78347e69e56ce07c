#pragma once
// The one entry point of the image decoder module (libattnscope-image-decoder.so, beside the
// programs). The command line opens the module only for `--image`, so that a run on text or on
// q/k/v files never loads Qt: linking Qt 6 Gui, Core and DBus made every LibTorch command start
// about 4 % slower (docs/PERFORMANCE.md, "Start-up"). Both sides are built from this tree by the
// same compiler, so C++ types cross the boundary; the version guards against a stale module.

#include <attnscope/image_input.h>
#include <attnscope/result.h>

namespace attnscope::app {

inline constexpr const char* kImageDecoderModule = "libattnscope-image-decoder.so";
inline constexpr const char* kImageDecoderSymbol = "attnscope_decode_image_v1";

/// Decodes `path` into `*out` (a picture or an error naming the file and the cause). Never throws.
using DecodeImageFunction = void (*)(const char* path, engine::Result<engine::RgbImage>* out);

}  // namespace attnscope::app
