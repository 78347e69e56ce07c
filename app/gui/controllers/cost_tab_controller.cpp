#include "gui/controllers/cost_tab_controller.h"

#include "gui/panels/compare_variants_editor.h"
#include "gui/engine/eval_speed_job.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/engine/scaling_job.h"
#include "gui/engine/switch_ffn_job.h"

#include "views/cost/cost_view.h"
#include "views/cost/eval_speed_panel.h"
#include "views/cost/switch_ffn_panel.h"
#include "views/widgets/param_form.h"

#include <attnscope/variant_catalog.h>

#include <QComboBox>

namespace attnscope::app {

CostTabController::CostTabController(EngineRunner* runner, views::CostView* view, RunSettingsPanel* inputs, QObject* parent)
    : QObject(parent), m_view(view), m_inputs(inputs) {
    m_scaling = new ScalingJob(runner, this);
    m_evalSpeed = new EvalSpeedJob(runner, this);
    m_switchFfn = new SwitchFfnJob(runner, this);
    connect(m_view, &views::CostView::scalingRequested, this, &CostTabController::startScaling);
    connect(m_view, &views::CostView::scalingCancelRequested, m_scaling, &ScalingJob::cancel);
    connect(m_scaling, &ScalingJob::started, m_view, &views::CostView::setScalingStarted);
    connect(m_scaling, &ScalingJob::started, this, &CostTabController::busyChanged);
    connect(m_scaling, &ScalingJob::pointMeasured, m_view, &views::CostView::addScalingPoint);
    connect(m_scaling, &ScalingJob::progressChanged, m_view, &views::CostView::setScalingProgress);
    connect(m_scaling, &ScalingJob::finished, this, [this](const QString& message, bool) {
        m_view->setScalingFinished(message);
        Q_EMIT busyChanged();
    });
    connectEvalSpeed();
    connectSwitchFfn();
}

void CostTabController::connectSwitchFfn() {
    views::SwitchFfnPanel* panel = m_view->switchFfnPanel();
    connect(panel, &views::SwitchFfnPanel::measureRequested, m_switchFfn, &SwitchFfnJob::start);
    connect(panel, &views::SwitchFfnPanel::cancelRequested, m_switchFfn, &SwitchFfnJob::cancel);
    connect(m_switchFfn, &SwitchFfnJob::started, panel, &views::SwitchFfnPanel::setStarted);
    connect(m_switchFfn, &SwitchFfnJob::started, this, &CostTabController::busyChanged);
    connect(m_switchFfn, &SwitchFfnJob::pointMeasured, panel, &views::SwitchFfnPanel::addPoint);
    connect(m_switchFfn, &SwitchFfnJob::progressChanged, panel, &views::SwitchFfnPanel::setProgress);
    connect(m_switchFfn, &SwitchFfnJob::finished, this, [this, panel](const QString& message, bool) {
        panel->setFinished(message);
        Q_EMIT busyChanged();
    });
}

void CostTabController::connectEvalSpeed() {
    views::EvalSpeedPanel* panel = m_view->evalSpeedPanel();
    connect(panel, &views::EvalSpeedPanel::measureRequested, m_evalSpeed, &EvalSpeedJob::start);
    connect(panel, &views::EvalSpeedPanel::cancelRequested, m_evalSpeed, &EvalSpeedJob::cancel);
    connect(m_evalSpeed, &EvalSpeedJob::started, panel, &views::EvalSpeedPanel::setStarted);
    connect(m_evalSpeed, &EvalSpeedJob::started, this, &CostTabController::busyChanged);
    connect(m_evalSpeed, &EvalSpeedJob::sampleMeasured, panel, &views::EvalSpeedPanel::addSample);
    connect(m_evalSpeed, &EvalSpeedJob::progressChanged, panel, &views::EvalSpeedPanel::setProgress);
    connect(m_evalSpeed, &EvalSpeedJob::finished, this, [this, panel](const QString& message, bool) {
        panel->setFinished(message);
        Q_EMIT busyChanged();
    });
}

bool CostTabController::isRunning() const {
    return m_scaling->isRunning() || m_evalSpeed->isRunning() || m_switchFfn->isRunning();
}

void CostTabController::cancel() {
    if (m_scaling->isRunning()) m_scaling->cancel();
    if (m_evalSpeed->isRunning()) m_evalSpeed->cancel();
    if (m_switchFfn->isRunning()) m_switchFfn->cancel();
}

void CostTabController::startScaling(const QStringList& ids, const QVector<int>& sizes) {
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
    m_scaling->start(request);
}

void CostTabController::setVariants(const std::vector<engine::VariantInfo>& variants) {
    QVector<QPair<QString, QString>> names;
    for (const auto& v : variants) names.push_back({QString::fromStdString(v.id), QString::fromStdString(v.name)});
    const bool firstFill = m_view->checkedVariants().isEmpty();
    m_view->setVariants(names);
    if (!firstFill) return;
    QStringList ids{QString::fromStdString(engine::exactReference().id), m_inputs->variantId()};
    ids += m_inputs->compareEditor()->ids().mid(0, 1);
    m_view->setCheckedVariants(ids);
}

}  // namespace attnscope::app
