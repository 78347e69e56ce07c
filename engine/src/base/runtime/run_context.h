#pragma once
// RunContext: what a variant needs besides Q, K, V — seed, limits, progress, workspaces and
// the counters it fills in. Internal, torch-free: the launcher's runs use it too.

#include "base/runtime/buffer_pool.h"
#include "base/runtime/qkv.h"
#include "base/api/engine_error.h"

#include <attnscope/progress.h>
#include <attnscope/types.h>

#include <chrono>
#include <map>
#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::engine {

class RunContext {
public:
    RunContext(BufferPool& pool, const ProgressFn& progress) : m_pool(pool), m_progress(progress) {}

    std::uint64_t seed = 0;
    /// The request's variant inputs (RunRequest::variantInputs); null or empty: none given.
    const std::map<std::string, PlainTensor>* inputs = nullptr;
    /// n and m are within the request's dense limit: diagnostics that need an n x m matrix (the
    /// Performer's error against softmax) are built.
    bool denseDiagnostics = false;
    /// Explicit Q, K and V whose values the engine has left unscanned for this variant
    /// (Variant::checksQkvValues): the variant must scan every value it is given, as it reads
    /// them, and call failNonFiniteQkv() on a NaN or an infinity, or checkQkvValuesNow() first.
    /// Null: already scanned.
    const SharedQkv* uncheckedQkv = nullptr;
    /// The q, k and v the variant runs on, for releaseHeadInput; null: nothing to let go.
    const Qkv* input = nullptr;
    /// The variant has read head h's q, k and v for the last time (a later read still works, only
    /// slower): the pages of values mapped from a file are let go (base/runtime/mapped_pages.h).
    void releaseHeadInput(std::int64_t h) const;
    /// Scans uncheckedQkv (if set) now; throws EngineError naming the first non-finite value.
    void checkQkvValuesNow();
    /// Throws EngineError naming the first non-finite value of uncheckedQkv (a variant's scan
    /// found one).
    [[noreturn]] void failNonFiniteQkv();

    BufferPool& pool() { return m_pool; }

    /// Reports progress; throws CancelledError when the callback returns false.
    void checkpoint(const char* stage, std::int64_t done, std::int64_t total) {
        if (m_progress && !m_progress(Progress{stage, done, total})) throw CancelledError();
    }

    /// Times a stage: call begin, do the work, call end; stages accumulate in order.
    void beginStage(const std::string& stage);
    void endStage();

    Counters& counters() { return m_counters; }
    /// Peak-bytes accounting for engine-owned buffers (workspaces, results).
    /// A notice for the user (a clamp, a skipped diagnostic); copied into RunResult::warnings.
    void warn(const std::string& message) { m_warnings.push_back(message); }
    const std::vector<std::string>& warnings() const { return m_warnings; }

    void noteBytes(std::uint64_t liveBytes) {
        if (liveBytes > m_counters.peakBytes) m_counters.peakBytes = liveBytes;
    }

private:
    BufferPool& m_pool;
    const ProgressFn& m_progress;
    Counters m_counters;
    std::vector<std::string> m_warnings;
    std::string m_stage;
    std::chrono::steady_clock::time_point m_stageStart;
};

}  // namespace attnscope::engine
