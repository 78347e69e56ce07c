#pragma once
// The API boundary of torch-free code: every exception a call may raise becomes an Error value
// (torch/tensors/api_guard.h adds LibTorch's own errors for the engine).

#include "base/api/engine_error.h"

#include <attnscope/result.h>

#include <new>
#include <string>

namespace attnscope::engine {

template <class Body>
auto guardedPlain(const char* outOfMemory, Body&& body) -> decltype(body()) {
    try {
        return body();
    } catch (const CancelledError&) {
        return makeError(ErrorCode::Cancelled, "cancelled");
    } catch (const EngineError& e) {
        return makeError(e.code, e.what());
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfBudget, outOfMemory);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Internal, e.what());
    }
}

}  // namespace attnscope::engine
