#include "gui/engine/eval_speed_job.h"

#include <attnscope/transfo_xl_eval_speed.h>

#include <QPointer>

namespace attnscope::app {

EvalSpeedJob::EvalSpeedJob(EngineRunner* runner, QObject* parent)
    : MeasureSweepJob(runner, {tr("Length %1"), tr("lengths"), tr("Nothing to measure: type some attention lengths.")}, parent) {}

void EvalSpeedJob::start(const QVector<int>& lengths) {
    startSweep(lengths, [self = QPointer<EvalSpeedJob>(this)](EngineBackend&, int length, const std::function<bool()>& keepGoing) -> engine::Result<Deliver> {
        auto point = engine::measureTransfoXlEvalSpeed(engine::EvalSpeedSettings{}, length,
                                                       [&](const engine::Progress&) { return keepGoing(); });
        if (!point) return point.error();
        const views::EvalSpeedSample sample{length, 1e3 * point->memorySecondsPerToken, 1e3 * point->recomputeSecondsPerToken};
        return Deliver([self, sample] {
            if (self) Q_EMIT self->sampleMeasured(sample);
        });
    });
}

}  // namespace attnscope::app
