#pragma once
// The engine's log sink: the app routes it to its log panel, the CLI to stderr.

#include <functional>
#include <string>

namespace attnscope::engine {

enum class LogLevel { Debug, Info, Warning, Error };
using LogFn = std::function<void(LogLevel level, const std::string& message)>;

}  // namespace attnscope::engine
