#pragma once
// Writing a whole file so that it is never seen half-written.

#include <attnscope/result.h>

#include <string>

namespace attnscope::engine {

/// Writes `contents` to `path` through a temporary file in the same folder, flushed and renamed
/// into place: on any failure (an Io error naming the path) nothing is left and an older file of
/// that name is untouched.
Result<void> writeFileAtomically(const std::string& path, const std::string& contents);

}  // namespace attnscope::engine
