#include "core/run_context.h"

#include "run/request_checks.h"

namespace attnscope::engine {

void RunContext::beginStage(const std::string& stage) {
    m_stage = stage;
    m_stageStart = std::chrono::steady_clock::now();
}

void RunContext::endStage() {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_stageStart).count();
    m_counters.stages.push_back(StageTime{m_stage, seconds});
    m_counters.seconds += seconds;
}

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
