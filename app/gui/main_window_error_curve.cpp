// MainWindow's error curve (main_window.h): the approximation view asks for one request holding
// the variant once per value of its sweep parameter plus the exact reference, and gets the mean
// row L1 error of each against that reference.

#include "gui/main_window.h"
#include "gui/view_tabs.h"
#include "gui/run_settings_panel.h"

#include "common/run_plan.h"
#include "gui/engine_runner.h"
#include "gui/model_controller.h"
#include "gui/run_status_bar.h"

#include "views/diagnostics/approximation_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/param_form.h"

#include <attnscope/result_roles.h>

#include <QComboBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSpinBox>
#include <QTimer>

namespace attnscope::app {

using engine::TokenizerKind;

void MainWindow::uiRunErrorCurve(const QString& variantId, const QString& paramName, const QVector<double>& values) {
    views::ApproximationView* view = m_views->diagnostics()->approximationView();
    // NOTE: a new request supersedes (cancels) the runner's current one; let a run in flight finish.
    if (m_runner->isRunning() || values.isEmpty()) {
        view->setErrorCurveFailed(values.isEmpty() ? tr("no values") : tr("a run is in progress; try again when it ends"));
        return;
    }
    // Same input, Q/K/V and seed as the shown result; the variant's other parameters as in the form.
    engine::RunRequest request;
    m_inputs->fillRequest(request);
    m_models->applyTo(request);
    const engine::ParamValues base =
        m_inputs->variantCombo()->currentData().toString() == variantId ? m_inputs->paramForm()->values() : engine::ParamValues{};
    request.variants = errorCurveVariants(variantId.toStdString(), base, std::vector<double>(values.begin(), values.end()));
    m_curveVariant = variantId;
    m_curveParam = paramName;
    m_curveValues = values;
    m_curveJob = m_runner->requestRun(std::move(request));
    m_status->runStarted();
    setStatusMessage(tr("Computing the error curve of %1 (%2 runs)…").arg(variantId).arg(values.size()));
    uiRunStateChanged(true);
}

void MainWindow::uiShowErrorCurve(const std::shared_ptr<const engine::RunResult>& result) {
    m_curveJob = 0;
    uiRunStateChanged(false);
    // results: one per value in request order, and the exact reference (errorCurveVariants).
    const auto& results = result->results;
    const int exact = engine::exactReferenceIndex(*result);
    QVector<double> values, errors;
    for (int i = 0; exact >= 0 && i < m_curveValues.size() && i < static_cast<int>(results.size()); ++i) {
        if (i == exact) continue;
        values << m_curveValues[i];
        errors << views::ApproximationView::meanRowL1Error(results[static_cast<std::size_t>(i)],
                                                           results[static_cast<std::size_t>(exact)]);
    }
    m_views->diagnostics()->approximationView()->setErrorCurve(m_curveVariant, m_curveParam, values, errors);
    QStringList warnings;
    for (const auto& w : result->warnings) warnings << QString::fromStdString(w);
    setStatusMessage(warnings.isEmpty() ? tr("Error curve of %1: %2 points.").arg(m_curveVariant).arg(values.size())
                                        : tr("Error curve of %1 — warning: %2").arg(m_curveVariant, warnings.join(QStringLiteral("; "))),
                     warnings.join(QLatin1Char('\n')));
}

}  // namespace attnscope::app
