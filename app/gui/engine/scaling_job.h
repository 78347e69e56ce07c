#pragma once
// The cost view's scaling run: every (variant, n) pair measured on the engine thread, one pair per
// step of an EngineTask, so the GUI thread never waits and the user's own runs go between steps.
// Each pair is a separate request (synthetic text of n bytes, bytes tokenizer, the window's
// projection settings, weights not kept), so a size over the memory budget is skipped with the
// engine's message instead of ending the sweep.

#include "views/cost/scaling_plot.h"

#include <attnscope/types.h>

#include <QHash>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>

#include <atomic>
#include <map>
#include <memory>
#include <string>

namespace attnscope::app {

class EngineRunner;

struct ScalingRequest {
    QStringList variantIds;
    QVector<int> sizes;
    engine::ProjectionSpec projection;
    /// Parameters per variant id; missing ids take the schema defaults.
    std::map<std::string, engine::ParamValues> params;
    QHash<QString, QString> labels;  ///< legend text per variant id; the id when missing
    /// Runs per pair; the fastest counts (the first run also pays for page faults and caches).
    int repeats = 2;
    std::uint64_t memoryBudgetBytes = 0;  ///< 0 = the engine's default budget
};

class ScalingJob : public QObject {
    Q_OBJECT
public:
    explicit ScalingJob(EngineRunner* runner, QObject* parent = nullptr);
    /// Cancels a sweep in flight (its steps stop at the next engine progress check).
    ~ScalingJob() override;

    /// Starts a sweep (cancelling one in flight) and returns its id. Bad requests (no variant,
    /// no size) finish at once with a message.
    quint64 start(const ScalingRequest& request);
    void cancel();
    bool isRunning() const { return m_running; }
    /// The text of `n` ASCII bytes the sweep tokenizes into exactly n tokens.
    static std::string syntheticText(int n);

Q_SIGNALS:
    void started(int total);
    void pointMeasured(const attnscope::views::ScalingPoint& point);
    void progressChanged(int done, int total, const QString& text);
    /// The sweep ended; `cancelled` when the user stopped it.
    void finished(const QString& message, bool cancelled);

private:
    struct State;
    void uiPoint(quint64 id, const views::ScalingPoint& point, int done, int total);
    void uiProgress(quint64 id, int done, int total, const QString& text);
    void uiFinished(quint64 id, const QString& message, bool cancelled);

    EngineRunner* m_runner = nullptr;
    std::shared_ptr<State> m_state;  // the sweep in flight
    quint64 m_nextId = 0;
    bool m_running = false;
};

}  // namespace attnscope::app
