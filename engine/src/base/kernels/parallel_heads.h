#pragma once
// Runs one job per head on the kernels' threads (base/runtime/worker_threads.h), each thread claiming
// the next head when it is done with one (a thread the scheduler holds back on a busy machine does
// not leave the others waiting), with BLAS single-threaded meanwhile: one single-threaded SGEMM per core instead of
// multi-threaded SGEMMs on small products. With fewer heads than threads the heads run one after
// another and the BLAS keeps its threads. Progress and cancel go through the run context from the
// first thread only; a cancel stops the others at their next head. Explicit values the engine left
// unscanned (RunContext::uncheckedQkv) are scanned head by head by the worker that runs the head;
// a NaN or an infinity fails the run with the engine's message once every worker has stopped.
// After a head's job the run lets go of that head's mapped input (RunContext::releaseHeadInput).

#include "base/runtime/run_context.h"

#include <cstdint>
#include <functional>

namespace attnscope::engine {

/// job(head, worker): worker in [0, workers(heads)) indexes per-thread scratch.
void forEachHead(std::int64_t heads, const char* stage, RunContext& ctx,
                 const std::function<void(std::int64_t head, int worker)>& job);

/// How many workers forEachHead uses for `heads` heads (the scratch to prepare).
int headWorkers(std::int64_t heads);

}  // namespace attnscope::engine
