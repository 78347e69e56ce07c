#pragma once
// The Cost tab's Transformer-XL evaluation-speed run: one attention length per step on the engine
// thread (measureTransfoXlEvalSpeed, in a scratch engine so the open model stays), through the
// Cost tab's sweep (MeasureSweepJob).

#include "gui/engine/measure_sweep_job.h"

#include "views/cost/eval_speed_panel.h"

namespace attnscope::app {

class EvalSpeedJob : public MeasureSweepJob {
    Q_OBJECT
public:
    explicit EvalSpeedJob(EngineRunner* runner, QObject* parent = nullptr);

    /// Starts measuring `lengths` (cancelling a run in flight); empty lengths finish at once.
    void start(const QVector<int>& lengths);

Q_SIGNALS:
    void sampleMeasured(const attnscope::views::EvalSpeedSample& sample);
};

}  // namespace attnscope::app
