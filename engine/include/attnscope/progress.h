#pragma once
// Progress reporting with cancellation (CONVENTIONS.md §2, rule 4).

#include <cstdint>
#include <functional>

namespace attnscope::engine {

struct Progress {
    const char* stage = "";  ///< short static label: "tokenize", "qkv", "attention", "write"
    std::int64_t done = 0;
    std::int64_t total = 0;
};

/// Called on the engine thread between heads, blocks and layers. Return false to cancel: the
/// engine stops at the next boundary and returns ErrorCode::Cancelled, discarding partial work.
using ProgressFn = std::function<bool(const Progress&)>;

}  // namespace attnscope::engine
