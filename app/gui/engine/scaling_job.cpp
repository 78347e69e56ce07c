#include "gui/engine/scaling_job.h"

#include "gui/engine/engine_backend.h"

#include <QPointer>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace attnscope::app {

namespace {

using Pairs = std::vector<std::pair<QString, int>>;  // (variant id, n), variant-major

// One pair's request: synthetic text of n bytes, the bytes tokenizer, the sweep's projections and
// the variant's parameters; no n × m diagnostics (the attention's own time and memory).
engine::RunRequest pairRequest(const ScalingRequest& sweep, const QString& variantId, int n) {
    engine::RunRequest request;
    request.source = engine::InputSpec{ScalingJob::syntheticText(n), engine::TokenizerKind::Bytes, std::nullopt};
    request.projection = sweep.projection;
    engine::VariantRequest variant{variantId.toStdString(), {}};
    if (auto it = sweep.params.find(variant.id); it != sweep.params.end()) variant.params = it->second;
    request.variants.push_back(std::move(variant));
    request.denseLimit = 0;
    request.memoryBudgetBytes = sweep.memoryBudgetBytes;
    return request;
}

}  // namespace

ScalingJob::ScalingJob(EngineRunner* runner, QObject* parent)
    : MeasureSweepJob(runner,
                      {QStringLiteral("%1"), tr("(variant, n) pairs"), tr("Nothing to measure: choose at least one variant and one size."),
                       tr("Scaling run cancelled.")},
                      parent) {
    qRegisterMetaType<attnscope::views::ScalingPoint>();
}

std::string ScalingJob::syntheticText(int n) {
    static const std::string kPhrase = "the quick brown fox jumps over the lazy dog ";
    std::string text;
    text.reserve(static_cast<std::size_t>(std::max(n, 0)));
    while (static_cast<int>(text.size()) < n) text += kPhrase;
    text.resize(static_cast<std::size_t>(std::max(n, 0)));
    return text;
}

void ScalingJob::start(const ScalingRequest& request) {
    auto pairs = std::make_shared<Pairs>();
    for (const QString& id : request.variantIds)
        for (int n : request.sizes) pairs->emplace_back(id, n);
    QVector<int> steps;
    for (int i = 0; i < static_cast<int>(pairs->size()); ++i) steps << i;
    const auto label = [labels = request.labels](const QString& id) { return labels.value(id, id); };
    const auto describe = [pairs, label](int step) {
        const auto& [id, n] = (*pairs)[static_cast<std::size_t>(step)];
        return tr("%1, n = %2").arg(label(id)).arg(n);
    };
    // The fastest of `repeats` runs counts (the first also pays for page faults and caches); a pair
    // the engine refuses (over the memory budget) is a skipped point, not the sweep's end.
    const auto measure = [self = QPointer<ScalingJob>(this), pairs, request, label](
                             EngineBackend& backend, int step, const std::function<bool()>& keepGoing) -> engine::Result<Deliver> {
        const auto& [id, n] = (*pairs)[static_cast<std::size_t>(step)];
        const engine::RunRequest run = pairRequest(request, id, n);
        const engine::ProgressFn progress = [&](const engine::Progress&) { return keepGoing(); };
        views::ScalingPoint point;
        point.variantId = id;
        point.label = label(id);
        point.n = n;
        point.seconds = std::numeric_limits<double>::infinity();
        for (int r = 0; r < std::max(1, request.repeats); ++r) {
            auto result = backend.run(run, progress);
            if (!result && (result.error().code == engine::ErrorCode::Cancelled || !keepGoing())) return result.error();
            if (!result || (*result)->results.empty()) {
                point.skipped = true;
                point.message = !result ? (result.error().code == engine::ErrorCode::OutOfBudget
                                               ? tr("skipped, over the memory budget: %1").arg(QString::fromStdString(result.error().message))
                                               : tr("skipped: %1").arg(QString::fromStdString(result.error().message)))
                                        : tr("skipped: the engine returned no result");
                break;
            }
            const engine::Counters& c = (*result)->results.front().counters;
            point.seconds = std::min(point.seconds, c.seconds);
            point.peakBytes = std::max(point.peakBytes, c.peakBytes);
            point.flops = c.flops;
        }
        if (point.skipped) point.seconds = 0;
        return Deliver([self, point] {
            if (self) Q_EMIT self->pointMeasured(point);
        });
    };
    startSweep(steps, measure, describe);
}

}  // namespace attnscope::app
