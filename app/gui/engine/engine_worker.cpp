#include "gui/engine/engine_worker.h"

#include "gui/engine/metatypes.h"

#include <QElapsedTimer>
#include <QMetaObject>

#include <algorithm>
#include <cstring>

namespace attnscope::app {

EngineWorker::EngineWorker(std::unique_ptr<EngineBackend> backend) : m_backend(std::move(backend)) {}

EngineWorker::~EngineWorker() = default;

std::optional<RunJob> EngineWorker::post(RunJob job) {
    std::optional<RunJob> replaced;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        replaced = std::exchange(m_pending, std::move(job));
    }
    // One wake-up per post; a wake-up that finds the slot empty (its job was superseded and
    // already run) does nothing.
    QMetaObject::invokeMethod(
        this, [this] { etProcessPending(); }, Qt::QueuedConnection);
    return replaced;
}

std::optional<RunJob> EngineWorker::takePending() {
    std::lock_guard<std::mutex> lock(m_mutex);
    return std::exchange(m_pending, std::nullopt);
}

void EngineWorker::postVariants(quint64 job) {
    QMetaObject::invokeMethod(
        this, [this, job] { etLoadVariants(job); }, Qt::QueuedConnection);
}

void EngineWorker::postTask(EngineTask task) {
    QMetaObject::invokeMethod(
        this, [this, task = std::move(task)] { etRunTask(task); }, Qt::QueuedConnection);
}

void EngineWorker::etRunTask(const EngineTask& task) {
    etProcessPending();  // a run the user asked for meanwhile goes before the next step
    if (task(*m_backend)) postTask(task);
}

void EngineWorker::etProcessPending() {
    while (std::optional<RunJob> job = takePending()) etRun(*job);
}

void EngineWorker::etRun(const RunJob& job) {
    if (job.cancelled->load()) {
        Q_EMIT jobFailed(job.id, tr("Cancelled"), static_cast<int>(engine::ErrorCode::Cancelled));
        return;
    }
    QElapsedTimer clock;
    clock.start();
    qint64 lastMs = -kProgressIntervalMs;
    int lastPermille = -1;
    std::string lastStage;
    // Throttled so a fast engine cannot flood the GUI thread's event queue.
    const engine::ProgressFn progress = [&](const engine::Progress& p) {
        if (job.cancelled->load(std::memory_order_relaxed)) return false;
        const int permille =
            p.total > 0 ? static_cast<int>(std::clamp<std::int64_t>(p.done * 1000 / p.total, 0, 1000)) : 0;
        const bool stageChanged = lastStage != p.stage;
        const qint64 now = clock.elapsed();
        if (stageChanged || (permille != lastPermille && (now - lastMs >= kProgressIntervalMs || permille == 1000))) {
            lastStage = p.stage;
            lastPermille = permille;
            lastMs = now;
            Q_EMIT progressChanged(job.id, permille, QString::fromUtf8(p.stage));
        }
        return true;
    };
    auto result = m_backend->run(job.request, progress);
    if (result)
        Q_EMIT runFinished(job.id, std::move(result.value()));
    else
        Q_EMIT jobFailed(job.id, QString::fromStdString(result.error().message), static_cast<int>(result.error().code));
}

void EngineWorker::etLoadVariants(quint64 job) { Q_EMIT variantsLoaded(job, m_backend->variants()); }

}  // namespace attnscope::app
