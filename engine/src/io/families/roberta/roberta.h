#pragma once
// The model types the roberta family reads, for the trainer that writes such folders.

namespace attnscope::engine::families::roberta {

inline constexpr const char* kModelType = "roberta";
/// The trainer's RoBERTa with every FFN a Switch layer (`train --arch switch`).
inline constexpr const char* kSwitchModelType = "roberta_switch";

}  // namespace attnscope::engine::families::roberta
