#pragma once
// The exceptions engine internals throw; engine.cpp turns them into Error values at the API
// boundary. Plain C++, so torch-free code (patterns, weights, file readers) throws them too.

#include <attnscope/result.h>

#include <stdexcept>
#include <string>

namespace attnscope::engine {

/// Thrown when the progress callback asks to stop: ErrorCode::Cancelled at the API boundary.
struct CancelledError : std::runtime_error {
    CancelledError() : std::runtime_error("cancelled") {}
};

/// Thrown for user-facing errors deep inside the engine; the boundary keeps code and message.
struct EngineError : std::runtime_error {
    EngineError(ErrorCode code, const std::string& message) : std::runtime_error(message), code(code) {}
    ErrorCode code;
};

}  // namespace attnscope::engine
