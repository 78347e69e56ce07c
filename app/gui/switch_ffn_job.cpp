#include "gui/switch_ffn_job.h"

#include "gui/engine_runner.h"
#include "gui/to_gui.h"

#include <QPointer>
#include <QThread>

#include <atomic>

namespace attnscope::app {

struct SwitchFfnJob::State {
    quint64 id = 0;
    QVector<int> tokens;
    engine::SwitchFfnCostSettings settings;
    int next = 0;  // touched on the engine thread only
    std::atomic<bool> cancelled{false};
    QPointer<SwitchFfnJob> job;  // read on the GUI thread only, inside the queued calls
};

SwitchFfnJob::SwitchFfnJob(EngineRunner* runner, QObject* parent) : QObject(parent), m_runner(runner) {}

SwitchFfnJob::~SwitchFfnJob() { cancel(); }

void SwitchFfnJob::cancel() {
    if (m_state) m_state->cancelled.store(true);
}

void SwitchFfnJob::start(const QVector<int>& tokens, int experts, double capacityFactor) {
    Q_ASSERT(QThread::currentThread() == thread());
    cancel();
    auto state = std::make_shared<State>();
    state->id = ++m_nextId;
    state->tokens = tokens;
    state->settings.experts = experts;
    state->settings.capacityFactor = capacityFactor;
    state->job = this;
    m_state = state;
    if (tokens.isEmpty()) {
        m_running = false;
        Q_EMIT finished(tr("Nothing to measure: type some token counts."), false);
        return;
    }
    m_running = true;
    const int total = static_cast<int>(tokens.size());
    Q_EMIT started(total);
    Q_EMIT progressChanged(0, total, tr("%1 tokens…").arg(tokens.front()));
    m_runner->postTask([state, total](EngineBackend&) -> bool {
        const auto finish = [&](const QString& message, bool cancelled) {
            toGui([job = state->job, id = state->id, message, cancelled] {
                if (job) job->uiFinished(id, message, cancelled);
            });
            return false;
        };
        if (state->cancelled.load()) return finish(tr("Cancelled."), true);
        const int tokens = state->tokens[state->next];
        auto point = engine::measureSwitchFfnCost(state->settings, tokens,
                                                  [&](const engine::Progress&) { return !state->cancelled.load(); });
        if (!point) {
            if (point.error().code == engine::ErrorCode::Cancelled) return finish(tr("Cancelled."), true);
            return finish(tr("%1 tokens failed: %2").arg(tokens).arg(QString::fromStdString(point.error().message)), false);
        }
        const int done = ++state->next;
        toGui([job = state->job, id = state->id, p = point.value(), done, total] {
            if (job) job->uiPoint(id, p, done, total);
        });
        if (done == total) return finish(tr("Measured %1 token counts.").arg(total), false);
        return true;
    });
}

void SwitchFfnJob::uiPoint(quint64 id, const engine::SwitchFfnCostPoint& point, int done, int total) {
    if (!m_state || id != m_state->id) return;
    Q_EMIT pointMeasured(point);
    const QString next = done < total ? tr(" %1 tokens…").arg(m_state->tokens[done]) : QString();
    Q_EMIT progressChanged(done, total, tr("%1 of %2 token counts measured.%3").arg(done).arg(total).arg(next));
}

void SwitchFfnJob::uiFinished(quint64 id, const QString& message, bool cancelled) {
    if (!m_state || id != m_state->id) return;
    m_running = false;
    Q_EMIT finished(message, cancelled);
}

}  // namespace attnscope::app
