#include "gui/eval_speed_job.h"

#include "gui/engine_runner.h"
#include "gui/to_gui.h"

#include <attnscope/transfo_xl_eval_speed.h>

#include <QCoreApplication>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <atomic>

namespace attnscope::app {

struct EvalSpeedJob::State {
    quint64 id = 0;
    QVector<int> lengths;
    int next = 0;  // touched on the engine thread only
    std::atomic<bool> cancelled{false};
    QPointer<EvalSpeedJob> job;  // read on the GUI thread only, inside the queued calls
};

EvalSpeedJob::EvalSpeedJob(EngineRunner* runner, QObject* parent) : QObject(parent), m_runner(runner) {}

EvalSpeedJob::~EvalSpeedJob() {
    if (m_state) m_state->cancelled.store(true);
}

void EvalSpeedJob::cancel() {
    if (m_state) m_state->cancelled.store(true);
}

void EvalSpeedJob::start(const QVector<int>& lengths) {
    Q_ASSERT(QThread::currentThread() == thread());
    cancel();
    auto state = std::make_shared<State>();
    state->id = ++m_nextId;
    state->lengths = lengths;
    state->job = this;
    m_state = state;
    if (lengths.isEmpty()) {
        m_running = false;
        Q_EMIT finished(tr("Nothing to measure: type some attention lengths."), false);
        return;
    }
    m_running = true;
    Q_EMIT started(static_cast<int>(lengths.size()));
    Q_EMIT progressChanged(0, static_cast<int>(lengths.size()), tr("Length %1…").arg(lengths.front()));
    m_runner->postTask([state](EngineBackend&) -> bool {
        const int total = static_cast<int>(state->lengths.size());
        const auto finish = [&](const QString& message, bool cancelled) {
            toGui([job = state->job, id = state->id, message, cancelled] {
                if (job) job->uiFinished(id, message, cancelled);
            });
            return false;
        };
        if (state->cancelled.load()) return finish(tr("Cancelled."), true);
        const int length = state->lengths[state->next];
        auto point = engine::measureTransfoXlEvalSpeed(engine::EvalSpeedSettings{}, length,
                                                       [&](const engine::Progress&) { return !state->cancelled.load(); });
        if (!point) {
            if (point.error().code == engine::ErrorCode::Cancelled) return finish(tr("Cancelled."), true);
            return finish(tr("Length %1 failed: %2").arg(length).arg(QString::fromStdString(point.error().message)), false);
        }
        const views::EvalSpeedSample sample{length, 1e3 * point->memorySecondsPerToken, 1e3 * point->recomputeSecondsPerToken};
        const int done = ++state->next;
        toGui([job = state->job, id = state->id, sample, done, total] {
            if (job) job->uiSample(id, sample, done, total);
        });
        if (done == total) return finish(tr("Measured %1 lengths.").arg(total), false);
        return true;
    });
}

void EvalSpeedJob::uiSample(quint64 id, const views::EvalSpeedSample& sample, int done, int total) {
    if (!m_state || id != m_state->id) return;
    Q_EMIT sampleMeasured(sample);
    const QString next = done < total ? tr(" Length %1…").arg(m_state->lengths[done]) : QString();
    Q_EMIT progressChanged(done, total, tr("%1 of %2 lengths measured.%3").arg(done).arg(total).arg(next));
}

void EvalSpeedJob::uiFinished(quint64 id, const QString& message, bool cancelled) {
    if (!m_state || id != m_state->id) return;
    m_running = false;
    Q_EMIT finished(message, cancelled);
}

}  // namespace attnscope::app
