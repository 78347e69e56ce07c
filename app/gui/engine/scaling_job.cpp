#include "gui/engine/scaling_job.h"

#include "gui/engine/engine_runner.h"
#include "gui/engine/to_gui.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <algorithm>
#include <limits>
#include <vector>

namespace attnscope::app {

struct ScalingJob::State {
    quint64 id = 0;
    ScalingRequest request;
    std::vector<std::pair<QString, int>> pairs;  // (variant id, n), variant-major
    std::size_t next = 0;                        // touched on the engine thread only
    std::atomic<bool> cancelled{false};
    QPointer<ScalingJob> job;  // read on the GUI thread only, inside the queued calls
};

ScalingJob::ScalingJob(EngineRunner* runner, QObject* parent) : QObject(parent), m_runner(runner) {
    qRegisterMetaType<attnscope::views::ScalingPoint>();
}

ScalingJob::~ScalingJob() {
    if (m_state) m_state->cancelled.store(true);
}

std::string ScalingJob::syntheticText(int n) {
    static const std::string kPhrase = "the quick brown fox jumps over the lazy dog ";
    std::string text;
    text.reserve(static_cast<std::size_t>(std::max(n, 0)));
    while (static_cast<int>(text.size()) < n) text += kPhrase;
    text.resize(static_cast<std::size_t>(std::max(n, 0)));
    return text;
}

quint64 ScalingJob::start(const ScalingRequest& request) {
    Q_ASSERT(QThread::currentThread() == thread());
    cancel();
    auto state = std::make_shared<State>();
    state->id = ++m_nextId;
    state->request = request;
    state->job = this;
    for (const QString& id : request.variantIds)
        for (int n : request.sizes) state->pairs.emplace_back(id, n);
    m_state = state;
    const int total = static_cast<int>(state->pairs.size());
    if (total == 0) {
        m_running = false;
        const quint64 id = state->id;
        toGui([job = QPointer<ScalingJob>(this), id] {
            if (job) job->uiFinished(id, tr("Nothing to measure: choose at least one variant and one size."), false);
        });
        return id;
    }
    m_running = true;
    Q_EMIT started(total);

    // One (variant, n) pair per step, on the engine thread.
    m_runner->postTask([state](EngineBackend& backend) -> bool {
        const int total = static_cast<int>(state->pairs.size());
        const auto finish = [&](const QString& message, bool cancelled) {
            toGui([job = state->job, id = state->id, message, cancelled] {
                if (job) job->uiFinished(id, message, cancelled);
            });
            return false;
        };
        if (state->cancelled.load()) return finish(tr("Scaling run cancelled."), true);
        const std::size_t index = state->next++;
        const auto& [variantId, n] = state->pairs[index];
        const QString label = state->request.labels.value(variantId, variantId);
        toGui([job = state->job, id = state->id, done = static_cast<int>(index), total,
               text = tr("%1, n = %2").arg(label).arg(n)] {
            if (job) job->uiProgress(id, done, total, text);
        });

        engine::RunRequest request;
        request.source = engine::InputSpec{syntheticText(n), engine::TokenizerKind::Bytes, std::nullopt};
        request.projection = state->request.projection;
        engine::VariantRequest variant{variantId.toStdString(), {}};
        if (auto it = state->request.params.find(variant.id); it != state->request.params.end())
            variant.params = it->second;
        request.variants.push_back(std::move(variant));
        request.denseLimit = 0;  // time and memory of the attention itself, no n x m diagnostics
        request.memoryBudgetBytes = state->request.memoryBudgetBytes;
        const engine::ProgressFn progress = [&](const engine::Progress&) { return !state->cancelled.load(); };

        views::ScalingPoint point;
        point.variantId = variantId;
        point.label = label;
        point.n = n;
        point.seconds = std::numeric_limits<double>::infinity();
        for (int r = 0; r < std::max(1, state->request.repeats); ++r) {
            auto result = backend.run(request, progress);
            if (!result) {
                if (result.error().code == engine::ErrorCode::Cancelled || state->cancelled.load())
                    return finish(tr("Scaling run cancelled."), true);
                point.skipped = true;
                point.message = result.error().code == engine::ErrorCode::OutOfBudget
                                    ? tr("skipped, over the memory budget: %1").arg(QString::fromStdString(result.error().message))
                                    : tr("skipped: %1").arg(QString::fromStdString(result.error().message));
                break;
            }
            if ((*result)->results.empty()) {
                point.skipped = true;
                point.message = tr("skipped: the engine returned no result");
                break;
            }
            const engine::Counters& c = (*result)->results.front().counters;
            point.seconds = std::min(point.seconds, c.seconds);
            point.peakBytes = std::max(point.peakBytes, c.peakBytes);
            point.flops = c.flops;
        }
        if (point.skipped) point.seconds = 0;
        const bool last = state->next >= state->pairs.size();
        toGui([job = state->job, id = state->id, point, done = static_cast<int>(index) + 1, total] {
            if (job) job->uiPoint(id, point, done, total);
        });
        if (last) return finish(tr("Measured %1 (variant, n) pairs.").arg(total), false);
        return true;
    });
    return state->id;
}

void ScalingJob::cancel() {
    if (!m_state || !m_running) return;
    m_state->cancelled.store(true);
}

void ScalingJob::uiPoint(quint64 id, const views::ScalingPoint& point, int done, int total) {
    if (!m_state || id != m_state->id) return;  // a superseded sweep
    Q_EMIT pointMeasured(point);
    Q_EMIT progressChanged(done, total, point.skipped ? point.message : tr("%1, n = %2").arg(point.label).arg(point.n));
}

void ScalingJob::uiProgress(quint64 id, int done, int total, const QString& text) {
    if (!m_state || id != m_state->id || m_state->cancelled.load()) return;
    Q_EMIT progressChanged(done, total, text);
}

void ScalingJob::uiFinished(quint64 id, const QString& message, bool cancelled) {
    if (!m_state || id != m_state->id) return;
    m_running = false;
    Q_EMIT finished(message, cancelled);
}

}  // namespace attnscope::app
