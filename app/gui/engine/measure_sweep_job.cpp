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
    Describe describe;
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

void MeasureSweepJob::startSweep(const QVector<int>& sizes, Measure measure, Describe describe) {
    Q_ASSERT(QThread::currentThread() == thread());
    cancel();
    auto state = std::make_shared<State>();
    state->id = ++m_nextId;
    state->sizes = sizes;
    state->measure = std::move(measure);
    const Words words = m_words;
    state->describe = describe ? std::move(describe) : Describe([words](int step) { return words.size.arg(step); });
    state->words = m_words;
    if (state->words.cancelled.isEmpty()) state->words.cancelled = tr("Cancelled.");
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
    Q_EMIT progressChanged(0, total, state->describe(sizes.front()) + QStringLiteral("…"));
    m_runner->postTask([state, total](EngineBackend& backend) -> bool {
        const auto finish = [&](const QString& message, bool cancelled) {
            toGui([job = state->job, id = state->id, message, cancelled] {
                if (job) job->uiFinished(id, message, cancelled);
            });
            return false;
        };
        if (state->cancelled.load()) return finish(state->words.cancelled, true);
        const int size = state->sizes[state->next];
        auto deliver = state->measure(backend, size, [&] { return !state->cancelled.load(); });
        if (!deliver) {
            if (deliver.error().code == engine::ErrorCode::Cancelled || state->cancelled.load()) return finish(state->words.cancelled, true);
            return finish(tr("%1 failed: %2").arg(state->describe(size), QString::fromStdString(deliver.error().message)), false);
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
    const QString next = done < total ? QStringLiteral(" ") + m_state->describe(m_state->sizes[done]) + QStringLiteral("…") : QString();
    Q_EMIT progressChanged(done, total, tr("%1 of %2 %3 measured.%4").arg(done).arg(total).arg(m_words.sizes, next));
}

void MeasureSweepJob::uiFinished(quint64 id, const QString& message, bool cancelled) {
    if (!m_state || id != m_state->id) return;
    m_running = false;
    Q_EMIT finished(message, cancelled);
}

}  // namespace attnscope::app
