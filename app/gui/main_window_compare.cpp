// MainWindow: the compared variants of the Compare tab (2–4 with their forms, plus exact softmax
// for the error summary) and the Cost tab's scaling run. Kept apart from main_window.cpp so the
// explorer's wiring stays in one place.

#include "gui/main_window.h"
#include "gui/view_tabs.h"
#include "gui/run_settings_panel.h"
#include "common/run_plan.h"

#include <attnscope/result_roles.h>
#include <attnscope/variant_catalog.h>

#include "gui/compare_variants_editor.h"
#include "gui/engine_runner.h"
#include "gui/eval_speed_job.h"
#include "gui/scaling_job.h"

#include "views/cost_view.h"
#include "views/eval_speed_panel.h"
#include "views/heads_grid.h"
#include "views/param_form.h"

#include <QAction>
#include <QComboBox>
#include <QSpinBox>

#include <algorithm>

namespace attnscope::app {

void MainWindow::uiConnectExplorerViews() {
    // Double-clicking a thumbnail opens that head large (the click itself already selected it).
    connect(m_views->headsGrid(), &views::HeadsGrid::headOpened, this, [this] { showView(View::Heatmap); });
    m_scalingJob = new ScalingJob(m_runner, this);
    connect(m_views->costView(), &views::CostView::scalingRequested, this, [this](const QStringList& ids, const QVector<int>& sizes) {
        // The window's Q/K/V settings; each variant with the parameters its form shows, if any.
        ScalingRequest request;
        request.variantIds = ids;
        request.sizes = sizes;
        request.projection = m_inputs->projection();
        for (const QString& id : ids) {
            const int index = m_inputs->variantCombo()->findData(id);
            request.labels.insert(id, index >= 0 ? m_inputs->variantCombo()->itemText(index) : id);
        }
        for (const engine::VariantRequest& v : m_inputs->compareEditor()->requests()) request.params[v.id] = v.params;
        request.params[m_inputs->variantCombo()->currentData().toString().toStdString()] = m_inputs->paramForm()->values();
        m_scalingJob->start(request);
    });
    connect(m_views->costView(), &views::CostView::scalingCancelRequested, m_scalingJob, &ScalingJob::cancel);
    connect(m_scalingJob, &ScalingJob::started, m_views->costView(), &views::CostView::setScalingStarted);
    // Esc (Run ▸ Cancel) cancels the sweep as it cancels a run (MainWindow::cancelRun).
    connect(m_scalingJob, &ScalingJob::started, this, [this] { m_cancelAction->setEnabled(true); });
    connect(m_scalingJob, &ScalingJob::pointMeasured, m_views->costView(), &views::CostView::addScalingPoint);
    connect(m_scalingJob, &ScalingJob::progressChanged, m_views->costView(), &views::CostView::setScalingProgress);
    connect(m_scalingJob, &ScalingJob::finished, m_views->costView(), [this](const QString& message, bool) {
        m_views->costView()->setScalingFinished(message);
        uiRunStateChanged(m_runner->isRunning());
    });
    uiConnectEvalSpeed();
}

void MainWindow::uiConnectEvalSpeed() {
    m_evalSpeedJob = new EvalSpeedJob(m_runner, this);
    views::EvalSpeedPanel* panel = m_views->costView()->evalSpeedPanel();
    connect(panel, &views::EvalSpeedPanel::measureRequested, m_evalSpeedJob, &EvalSpeedJob::start);
    connect(panel, &views::EvalSpeedPanel::cancelRequested, m_evalSpeedJob, &EvalSpeedJob::cancel);
    connect(m_evalSpeedJob, &EvalSpeedJob::started, panel, &views::EvalSpeedPanel::setStarted);
    connect(m_evalSpeedJob, &EvalSpeedJob::started, this, [this] { m_cancelAction->setEnabled(true); });
    connect(m_evalSpeedJob, &EvalSpeedJob::sampleMeasured, panel, &views::EvalSpeedPanel::addSample);
    connect(m_evalSpeedJob, &EvalSpeedJob::progressChanged, panel, &views::EvalSpeedPanel::setProgress);
    connect(m_evalSpeedJob, &EvalSpeedJob::finished, panel, [this, panel](const QString& message, bool) {
        panel->setFinished(message);
        uiRunStateChanged(m_runner->isRunning());
    });
}

void MainWindow::uiShowExplorerVariants() {
    m_inputs->compareEditor()->setVariants(m_inputs->variants(), m_preferredCompare);
    const QStringList extra = m_options.compareVariant.split(QLatin1Char(','), Qt::SkipEmptyParts).mid(1);
    for (const QString& id : extra) m_inputs->compareEditor()->addRow(id.trimmed());
    m_options.compareVariant.clear();  // extra rows are added once, not on every variants reload

    QVector<QPair<QString, QString>> names;
    for (const auto& v : m_inputs->variants()) names.push_back({QString::fromStdString(v.id), QString::fromStdString(v.name)});
    const bool firstFill = m_views->costView()->checkedVariants().isEmpty();
    m_views->costView()->setVariants(names);
    if (firstFill) {
        // A useful first sweep: exact softmax against the chosen and the first compared variant.
        QStringList ids{QString::fromStdString(engine::exactReference().id), m_inputs->variantId()};
        ids += m_inputs->compareEditor()->ids().mid(0, 1);
        m_views->costView()->setCheckedVariants(ids);
    }
}

}  // namespace attnscope::app
