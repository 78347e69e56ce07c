#pragma once
// Runs attnscope-sentencepiece (engine/sentencepiece_helper/) as a child process and returns what
// it printed. Found next to the executable, in ../bin, or where the build put it.

#include <attnscope/result.h>

#include <string>
#include <vector>

namespace attnscope::engine {

/// The helper's standard output for `args` (after the program name). Errors: Unsupported when
/// the helper is not found (naming the places tried), InvalidInput with its message when it fails.
Result<std::string> runSentencePieceHelper(const std::vector<std::string>& args);

}  // namespace attnscope::engine
