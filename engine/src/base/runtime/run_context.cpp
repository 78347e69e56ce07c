#include "base/runtime/run_context.h"

#include "base/runtime/mapped_pages.h"

namespace attnscope::engine {

void RunContext::releaseHeadInput(std::int64_t h) const {
    if (!input) return;
    dropMappedHead(input->q, h);
    dropMappedHead(input->k, h);
    dropMappedHead(input->v, h);
}

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

}  // namespace attnscope::engine
