#include "gui/engine/measure_sweep_job.h"

#include "gui/engine/engine_runner.h"
#include "gui/engine/to_gui.h"

#include <QPointer>
#include <QThread>

#include <atomic>

namespace attnscope::app {

struct MeasureSweepJob::State {
    quint64 id = 0;
    QVector<int> sizes;
    Measure measure;
    Words words;
    int next = 0;  // touched on the engine thread only
    std::atomic<bool> cancelled{false};
    QPointer<MeasureSweepJob> job;  // read on the GUI thread only, inside the queued calls
};

MeasureSweepJob::MeasureSweepJob(EngineRunner* runner, Words words, QObject* parent)
    : QObject(parent), m_runner(runner), m_words(std::move(words)) {}

MeasureSweepJob::~MeasureSweepJob() { cancel(); }

void MeasureSweepJob::cancel() {
    if (m_state) m_state->cancelled.store(true);
}

void MeasureSweepJob::startSweep(const QVector<int>& sizes, Measure measure) {
    Q_ASSERT(QThread::currentThread() == thread());
    cancel();
    auto state = std::make_shared<State>();
    state->id = ++m_nextId;
    state->sizes = sizes;
    state->measure = std::move(measure);
    state->words = m_words;
    state->job = this;
    m_state = state;
    if (sizes.isEmpty()) {
        m_running = false;
        Q_EMIT finished(m_words.nothing, false);
        return;
    }
    m_running = true;
    const int total = static_cast<int>(sizes.size());
    Q_EMIT started(total);
    Q_EMIT progressChanged(0, total, m_words.size.arg(sizes.front()) + QStringLiteral("…"));
    m_runner->postTask([state, total](EngineBackend&) -> bool {
        const auto finish = [&](const QString& message, bool cancelled) {
            toGui([job = state->job, id = state->id, message, cancelled] {
                if (job) job->uiFinished(id, message, cancelled);
            });
            return false;
        };
        if (state->cancelled.load()) return finish(tr("Cancelled."), true);
        const int size = state->sizes[state->next];
        auto deliver = state->measure(size, [&] { return !state->cancelled.load(); });
        if (!deliver) {
            if (deliver.error().code == engine::ErrorCode::Cancelled) return finish(tr("Cancelled."), true);
            return finish(tr("%1 failed: %2").arg(state->words.size.arg(size), QString::fromStdString(deliver.error().message)), false);
        }
        const int done = ++state->next;
        toGui([job = state->job, id = state->id, deliver = std::move(deliver.value()), done, total] {
            if (job) job->uiSample(id, deliver, done, total);
        });
        if (done == total) return finish(tr("Measured %1 %2.").arg(total).arg(state->words.sizes), false);
        return true;
    });
}

void MeasureSweepJob::uiSample(quint64 id, const Deliver& deliver, int done, int total) {
    if (!m_state || id != m_state->id) return;
    deliver();
    const QString next = done < total ? QStringLiteral(" ") + m_words.size.arg(m_state->sizes[done]) + QStringLiteral("…") : QString();
    Q_EMIT progressChanged(done, total, tr("%1 of %2 %3 measured.%4").arg(done).arg(total).arg(m_words.sizes, next));
}

void MeasureSweepJob::uiFinished(quint64 id, const QString& message, bool cancelled) {
    if (!m_state || id != m_state->id) return;
    m_running = false;
    Q_EMIT finished(message, cancelled);
}

}  // namespace attnscope::app
