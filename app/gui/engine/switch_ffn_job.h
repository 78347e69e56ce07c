#pragma once
// The Cost tab's Switch-versus-dense measurement: one token count per step on the engine thread
// (measureSwitchFfnCost), through the Cost tab's sweep (MeasureSweepJob).

#include "gui/engine/measure_sweep_job.h"

#include <attnscope/switch_ffn_cost.h>

namespace attnscope::app {

class SwitchFfnJob : public MeasureSweepJob {
    Q_OBJECT
public:
    explicit SwitchFfnJob(EngineRunner* runner, QObject* parent = nullptr);

    /// Starts measuring `tokens` (cancelling a run in flight); empty counts finish at once.
    void start(const QVector<int>& tokens, int experts, double capacityFactor);

Q_SIGNALS:
    void pointMeasured(const attnscope::engine::SwitchFfnCostPoint& point);
};

}  // namespace attnscope::app
