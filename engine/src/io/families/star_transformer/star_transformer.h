#pragma once
// The model type the star-transformer family reads, for the trainer that writes such folders and
// the Star pass that opens them (torch/model/star_weights.cpp).

namespace attnscope::engine::families::star_transformer {

inline constexpr const char* kModelType = "star-transformer";

}  // namespace attnscope::engine::families::star_transformer
