#pragma once
// The API boundary: every exception an engine call may raise becomes an Error value, so no call
// of attnscope::engine::Engine throws (CONVENTIONS.md §2).

#include "plain/engine_error.h"

#include <attnscope/result.h>

#include <c10/util/Exception.h>

#include <new>
#include <string>

namespace attnscope::engine {

template <class Body>
auto guarded(const char* outOfMemory, Body&& body) -> decltype(body()) {
    try {
        return body();
    } catch (const CancelledError&) {
        return makeError(ErrorCode::Cancelled, "cancelled");
    } catch (const EngineError& e) {
        return makeError(e.code, e.what());
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal, std::string("LibTorch error: ") + e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfBudget, outOfMemory);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, e.what());
    }
}

}  // namespace attnscope::engine
