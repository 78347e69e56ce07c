#pragma once
// Turns GUI intents into engine jobs on one engine thread (CONVENTIONS.md §3). Job ids increase;
// a newer run supersedes the queued one and cancels the running one; results of stale ids are
// dropped, so a listener only ever sees signals of the latest run (and of variants queries).

#include "gui/engine/engine_backend.h"
#include "gui/engine/metatypes.h"

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <memory>

namespace attnscope::app {

class EngineWorker;

class EngineRunner : public QObject {
    Q_OBJECT
public:
    /// Starts the engine thread and moves `backend` onto it (it is destroyed there, too).
    explicit EngineRunner(std::unique_ptr<EngineBackend> backend, QObject* parent = nullptr);
    /// Cancels the running job and waits for the engine thread to finish.
    ~EngineRunner() override;

    /// Queues a run and returns its job id. The request is copied by value: settings are read on
    /// the GUI thread before it is queued.
    quint64 requestRun(engine::RunRequest request);
    /// Queues a variants query; answered by variantsLoaded with the returned id.
    quint64 requestVariants();
    /// Cancels the latest run: jobFailed(id, …, ErrorCode::Cancelled) follows once.
    void cancel();
    /// Queues background work of another kind than runs (e.g. ScalingJob's sweep): it neither
    /// supersedes nor is superseded by runs; runs requested meanwhile go between its steps. The
    /// task owns its cancel flag and reports back itself (queued to the GUI thread).
    void postTask(EngineTask task);

    quint64 latestRunJob() const { return m_latestRun; }
    /// True from requestRun until the latest run's runFinished or jobFailed.
    bool isRunning() const { return m_latestRun != 0 && !m_latestDone; }

Q_SIGNALS:
    void progressChanged(quint64 job, int permille, QString stage);
    void runFinished(quint64 job, std::shared_ptr<const attnscope::engine::RunResult> result);
    /// `code` is an attnscope::engine::ErrorCode.
    void jobFailed(quint64 job, QString message, int code);
    void variantsLoaded(quint64 job, std::vector<attnscope::engine::VariantInfo> variants);

private:
    bool uiIsLive(quint64 job) const { return job == m_latestRun && !m_latestDone; }
    void uiOnProgress(quint64 job, int permille, const QString& stage);
    void uiOnFinished(quint64 job, std::shared_ptr<const engine::RunResult> result);
    void uiOnFailed(quint64 job, const QString& message, int code);

    QThread m_thread;
    EngineWorker* m_worker = nullptr;  // lives on m_thread, deleted there when it finishes
    quint64 m_nextJob = 0;
    quint64 m_latestRun = 0;
    bool m_latestDone = true;
    std::shared_ptr<std::atomic<bool>> m_latestCancel;
};

}  // namespace attnscope::app
