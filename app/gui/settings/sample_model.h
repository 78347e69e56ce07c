#pragma once
// The trained sample model bundled in the application's resources (samples/transfo-xl-moby),
// written once to the user's data folder so the engine can open it like any model folder.

#include <QString>

#include <optional>

namespace attnscope::app {

/// The resource folder of the sample ("config.json", "model.safetensors").
inline constexpr const char* kSampleModelResource = ":/samples/transfo-xl-moby";

/// The folder holding the sample's files under `dataDir` (written when missing or of another
/// size, each through a temporary file); nullopt with *error when a file cannot be written.
std::optional<QString> extractSampleModel(const QString& dataDir, QString* error);

}  // namespace attnscope::app
