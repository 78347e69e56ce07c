// RunContext's deferred check of explicit inputs (base/runtime/run_context.h): the values are scanned once
// a run needs them, with the request checks' own scan (a floor above the run context).

#include "base/runtime/run_context.h"
#include "attention/run/request_checks.h"

namespace attnscope::engine {

void RunContext::checkQkvValuesNow() {
    if (!uncheckedQkv) return;
    auto finite = checkQkvValues(*uncheckedQkv);
    uncheckedQkv = nullptr;
    if (!finite) throw EngineError(finite.error().code, finite.error().message);
}

void RunContext::failNonFiniteQkv() {
    if (uncheckedQkv) checkQkvValuesNow();
    throw EngineError(ErrorCode::Internal, "a non-finite value was found in q, k or v, and then not found again");
}

}  // namespace attnscope::engine
