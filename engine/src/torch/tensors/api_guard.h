#pragma once
// The API boundary: every exception an engine call may raise becomes an Error value, so no call
// of attnscope::engine::Engine throws (CONVENTIONS.md §2).

#include "base/runtime/plain_guard.h"

#include <attnscope/result.h>

#include <c10/util/Exception.h>

#include <string>

namespace attnscope::engine {

template <class Body>
auto guarded(const char* outOfMemory, Body&& body) -> decltype(body()) {
    return guardedPlain(outOfMemory, [&]() -> decltype(body()) {
        try {
            return body();
        } catch (const c10::Error& e) {
            return makeError(ErrorCode::Internal, std::string("LibTorch error: ") + e.what_without_backtrace());
        }
    });
}

}  // namespace attnscope::engine
