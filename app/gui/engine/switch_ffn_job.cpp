#include "gui/engine/switch_ffn_job.h"

#include <QPointer>

namespace attnscope::app {

SwitchFfnJob::SwitchFfnJob(EngineRunner* runner, QObject* parent)
    : MeasureSweepJob(runner, {tr("%1 tokens"), tr("token counts"), tr("Nothing to measure: type some token counts.")}, parent) {}

void SwitchFfnJob::start(const QVector<int>& tokens, int experts, double capacityFactor) {
    engine::SwitchFfnCostSettings settings;
    settings.experts = experts;
    settings.capacityFactor = capacityFactor;
    startSweep(tokens, [self = QPointer<SwitchFfnJob>(this), settings](EngineBackend&, int count, const std::function<bool()>& keepGoing) -> engine::Result<Deliver> {
        auto point = engine::measureSwitchFfnCost(settings, count, [&](const engine::Progress&) { return keepGoing(); });
        if (!point) return point.error();
        return Deliver([self, p = point.value()] {
            if (self) Q_EMIT self->pointMeasured(p);
        });
    });
}

}  // namespace attnscope::app
