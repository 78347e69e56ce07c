#pragma once
// The model type the transfo-xl family reads, for the trainer that writes such folders.

namespace attnscope::engine::families::transfo_xl {

inline constexpr const char* kModelType = "transfo-xl";

}  // namespace attnscope::engine::families::transfo_xl
