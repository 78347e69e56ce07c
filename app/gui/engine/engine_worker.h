#pragma once
// The object that lives on the engine thread and owns the backend. EngineRunner is its only user:
// it posts jobs from the GUI thread, the worker runs them and reports through queued signals.

#include "gui/engine/engine_backend.h"
#include "gui/engine/metatypes.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

namespace attnscope::app {

struct RunJob {
    quint64 id = 0;
    engine::RunRequest request;
    std::shared_ptr<std::atomic<bool>> cancelled;  ///< set by the GUI thread; read by the progress callback
};

class EngineWorker : public QObject {
    Q_OBJECT
public:
    /// Progress signals are at least this far apart (ms), unless the stage changes or it is done.
    static constexpr int kProgressIntervalMs = 50;

    explicit EngineWorker(std::unique_ptr<EngineBackend> backend);
    ~EngineWorker() override;

    // Thread-safe; called on the GUI thread.
    /// Queues `job` in the single pending slot and returns the queued job it replaced, if any.
    std::optional<RunJob> post(RunJob job);
    /// Removes the queued job (not the running one) and returns it.
    std::optional<RunJob> takePending();
    /// Queues a variants query behind the jobs already queued.
    void postVariants(quint64 job);
    /// Queues one step of `task`; the pending run (if any) goes first.
    void postTask(EngineTask task);

Q_SIGNALS:
    void progressChanged(quint64 job, int permille, QString stage);
    void runFinished(quint64 job, std::shared_ptr<const attnscope::engine::RunResult> result);
    void jobFailed(quint64 job, QString message, int code);
    void variantsLoaded(quint64 job, std::vector<attnscope::engine::VariantInfo> variants);

private:
    void etProcessPending();
    void etRun(const RunJob& job);
    void etLoadVariants(quint64 job);
    void etRunTask(const EngineTask& task);

    std::unique_ptr<EngineBackend> m_backend;  // used on the engine thread only
    std::mutex m_mutex;
    std::optional<RunJob> m_pending;  // guarded by m_mutex
};

}  // namespace attnscope::app
