#include "gui/engine/engine_runner.h"

#include "gui/engine/engine_worker.h"

#include <QCoreApplication>
#include <QLoggingCategory>

namespace attnscope::app {

Q_LOGGING_CATEGORY(lcRunner, "attnscope.app.runner", QtInfoMsg)

void registerEngineMetaTypes() {
    qRegisterMetaType<std::shared_ptr<const attnscope::engine::RunResult>>();
    qRegisterMetaType<std::vector<attnscope::engine::VariantInfo>>();
}

EngineRunner::EngineRunner(std::unique_ptr<EngineBackend> backend, QObject* parent) : QObject(parent) {
    registerEngineMetaTypes();
    m_thread.setObjectName(QStringLiteral("attnscope engine"));
    m_worker = new EngineWorker(std::move(backend));
    m_worker->moveToThread(&m_thread);
    // The worker (and the Engine inside it) is destroyed on the engine thread, where it was used.
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &EngineWorker::progressChanged, this, &EngineRunner::uiOnProgress);
    connect(m_worker, &EngineWorker::runFinished, this, &EngineRunner::uiOnFinished);
    connect(m_worker, &EngineWorker::jobFailed, this, &EngineRunner::uiOnFailed);
    connect(m_worker, &EngineWorker::variantsLoaded, this, &EngineRunner::variantsLoaded);
    m_thread.start();
}

EngineRunner::~EngineRunner() {
    if (m_latestCancel) m_latestCancel->store(true);
    m_worker->takePending();
    m_thread.quit();
    m_thread.wait();
}

quint64 EngineRunner::requestRun(engine::RunRequest request) {
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_latestCancel) m_latestCancel->store(true);  // cancels the running job, if it is the latest
    const quint64 id = ++m_nextJob;
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    if (auto superseded = m_worker->post(RunJob{id, std::move(request), cancelled}))
        qCDebug(lcRunner) << "job" << superseded->id << "superseded by" << id << "before it started";
    m_latestRun = id;
    m_latestDone = false;
    m_latestCancel = std::move(cancelled);
    return id;
}

quint64 EngineRunner::requestVariants() {
    const quint64 id = ++m_nextJob;
    m_worker->postVariants(id);
    return id;
}

void EngineRunner::postTask(EngineTask task) { m_worker->postTask(std::move(task)); }

void EngineRunner::cancel() {
    Q_ASSERT(QThread::currentThread() == thread());
    if (!isRunning()) return;
    m_latestCancel->store(true);
    // A job that never started gets no answer from the worker: answer it here, asynchronously
    // like every other job signal.
    if (auto queued = m_worker->takePending()) {
        m_latestDone = true;
        const quint64 id = queued->id;
        QMetaObject::invokeMethod(
            this, [this, id] { Q_EMIT jobFailed(id, tr("Cancelled"), static_cast<int>(engine::ErrorCode::Cancelled)); },
            Qt::QueuedConnection);
    }
}

void EngineRunner::uiOnProgress(quint64 job, int permille, const QString& stage) {
    if (!uiIsLive(job) || m_latestCancel->load()) return;
    Q_EMIT progressChanged(job, permille, stage);
}

void EngineRunner::uiOnFinished(quint64 job, std::shared_ptr<const engine::RunResult> result) {
    if (!uiIsLive(job)) {
        qCDebug(lcRunner) << "dropped the stale result of job" << job;
        return;
    }
    m_latestDone = true;
    // A backend may finish just after cancel(): the user asked for no result, so report the cancel.
    if (m_latestCancel->load()) {
        Q_EMIT jobFailed(job, tr("Cancelled"), static_cast<int>(engine::ErrorCode::Cancelled));
        return;
    }
    Q_EMIT runFinished(job, std::move(result));
}

void EngineRunner::uiOnFailed(quint64 job, const QString& message, int code) {
    if (!uiIsLive(job)) {
        qCDebug(lcRunner) << "dropped the stale failure of job" << job << message;
        return;
    }
    m_latestDone = true;
    if (m_latestCancel->load()) code = static_cast<int>(engine::ErrorCode::Cancelled);
    Q_EMIT jobFailed(job, message, code);
}

}  // namespace attnscope::app
