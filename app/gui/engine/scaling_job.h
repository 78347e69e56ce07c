#pragma once
// The cost view's scaling run, a MeasureSweepJob: every (variant, n) pair measured on the engine
// thread, one pair per step, so the GUI thread never waits and the user's own runs go between steps.
// Each pair is a separate request (synthetic text of n bytes, bytes tokenizer, the window's
// projection settings, weights not kept), so a size over the memory budget is skipped with the
// engine's message instead of ending the sweep.

#include "gui/engine/measure_sweep_job.h"

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

class ScalingJob : public MeasureSweepJob {
    Q_OBJECT
public:
    explicit ScalingJob(EngineRunner* runner, QObject* parent = nullptr);

    /// Starts a sweep (cancelling one in flight). Bad requests (no variant, no size) finish at
    /// once with a message.
    void start(const ScalingRequest& request);
    /// The text of `n` ASCII bytes the sweep tokenizes into exactly n tokens.
    static std::string syntheticText(int n);

Q_SIGNALS:
    void pointMeasured(const attnscope::views::ScalingPoint& point);
};

}  // namespace attnscope::app
