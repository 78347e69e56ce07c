#pragma once
// A ViT checkpoint's picture preparation as its preprocessor_config.json says (Hugging Face's
// ViTImageProcessor / DeiTImageProcessor fields): resize with Pillow's filter, centre crop,
// rescale to [0, 1], normalise per channel; and where each patch then lies on the user's picture.

#include <attnscope/image_input.h>
#include <attnscope/model_checkpoint.h>
#include <attnscope/result.h>

#include "io/image/pil_resize.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

struct ImagePreprocessor {
    bool doResize = true;                         ///< [do_resize]
    std::int64_t height = 224, width = 224;       ///< [size] {height, width} or one integer
    std::int64_t shortestEdge = 0;                ///< [size.shortest_edge]: the short side to it, aspect kept
    PilFilter resample = PilFilter::Bilinear;     ///< [resample]
    bool doCenterCrop = false;                    ///< [do_center_crop]
    std::int64_t cropHeight = 224, cropWidth = 224;  ///< [crop_size]
    bool doRescale = true;                        ///< [do_rescale]
    double rescaleFactor = 1.0 / 255.0;           ///< [rescale_factor]
    bool doNormalize = true;                      ///< [do_normalize]
    std::array<double, 3> mean{0.5, 0.5, 0.5};    ///< [image_mean]
    std::array<double, 3> std{0.5, 0.5, 0.5};     ///< [image_std]
    bool fromFile = false;                        ///< read from preprocessor_config.json (else ViT's defaults)
};

/// ViTImageProcessor's defaults for a model of `imageSize`: resize to it, bilinear, mean and std 0.5.
ImagePreprocessor defaultVitPreprocessor(std::int64_t imageSize);

/// Reads preprocessor_config.json text; each field type- and range-checked, naming it.
Result<ImagePreprocessor> parsePreprocessorConfig(const std::string& jsonText, const std::string& source);

/// `folder`/preprocessor_config.json, or ViT's defaults for `imageSize` with a warning when the
/// folder has none. A file that is there but wrong is refused.
Result<ImagePreprocessor> loadVitPreprocessor(const std::string& folder, std::int64_t imageSize, std::vector<std::string>& warnings);

/// The picture as the model reads it and where its patches lie on the source.
struct VitPicture {
    std::int64_t size = 0;       ///< the side of the square the model reads
    std::vector<float> pixels;   ///< [3, size, size] after rescale and normalisation
    ImageGrid grid;              ///< patches of `size` / P, with the model's prefix tokens and notes
};

/// Prepares `source` (values k/255) for a model with `vit` settings. A picture already of the
/// model's size is used as it is; otherwise resize and crop as `pre` says, each step noted.
/// Refuses a preparation that does not end at the model's image_size.
Result<VitPicture> prepareVitPicture(const RgbImage& source, const std::string& name, const ImagePreprocessor& pre,
                                     const VitSettings& vit);

}  // namespace attnscope::engine
