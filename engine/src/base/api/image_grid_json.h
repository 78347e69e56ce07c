#pragma once
// An image grid (where a run's tokens sit in the picture) as the JSON of a result file's
// `attnscope.image` metadata (docs/RESULT_FORMAT.md), and back.

#include <attnscope/image_input.h>
#include <attnscope/result.h>

#include <nlohmann/json.hpp>

namespace attnscope::engine {

nlohmann::json imageGridJson(const ImageGrid& grid);
/// Throws nlohmann::json exceptions on missing fields or wrong types; refuses sizes that are not positive.
Result<ImageGrid> imageGridFromJson(const nlohmann::json& j);

}  // namespace attnscope::engine
