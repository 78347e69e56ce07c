// MainWindow's run failures (main_window.h): the status bar always; a parameter's problem under
// its field, with the fix the engine names; a dialog for runs the user started.

#include "gui/main_window.h"
#include "gui/view_tabs.h"
#include "gui/run_settings_panel.h"

#include "views/diagnostics/approximation_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/param_form.h"

#include <attnscope/result.h>

#include <QComboBox>
#include <QMessageBox>
#include <QRegularExpression>

#include <functional>

namespace attnscope::app {

using engine::ErrorCode;

void MainWindow::uiShowFailure(quint64 job, const QString& message, int code) {
    if (job != 0 && job == m_curveJob) {
        m_curveJob = 0;
        uiRunStateChanged(false);
        m_views->diagnostics()->approximationView()->setErrorCurveFailed(message);
        setStatusMessage(tr("Error curve not computed: %1").arg(message), message);
        return;
    }
    if (job != m_currentJob) return;
    if (uiRetryCompareWithoutExact(code, message)) return;
    uiRunStateChanged(false);
    if (code == static_cast<int>(ErrorCode::Cancelled)) {
        setStatusMessage(tr("Run cancelled."));
        Q_EMIT runFailed(job, message, code);
        return;
    }
    const QString text = tr("Run failed (%1): %2")
                             .arg(QString::fromLatin1(engine::errorCodeName(static_cast<ErrorCode>(code))), message);
    setStatusMessage(text, message);
    // A parameter's problem is shown under its field, with the fix when the engine names one;
    // anything else in the status bar always, and in a dialog when the user asked for this run.
    const bool besideField = code == static_cast<int>(ErrorCode::InvalidArgument) && uiShowParameterProblem(message);
    if (!besideField && m_currentJobByUser && m_options.showErrorDialogs) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Run failed"), text, QMessageBox::Ok, this);
        box->setTextFormat(Qt::PlainText);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();  // window-modal, without a nested event loop
    }
    Q_EMIT runFailed(job, message, code);
}

bool MainWindow::uiShowParameterProblem(const QString& message) {
    // "bigbird: the block form needs n = 14 to be a multiple of parameter 'block' = 4 (set
    // pad=true to pad …)": the engine names the parameter, and the fix when there is one.
    const QString id = m_inputs->variantCombo()->currentData().toString();
    if (message.contains(QLatin1Char(':')) && !message.startsWith(id + QLatin1Char(':'))) return false;  // a compared variant's
    const QRegularExpressionMatch named = QRegularExpression(QStringLiteral("parameter '([A-Za-z_0-9]+)'")).match(message);
    if (!named.hasMatch() || m_inputs->paramForm()->variant().findParam(named.captured(1).toStdString()) == nullptr) return false;
    QString fixLabel;
    std::function<void()> fix;
    const QRegularExpressionMatch suggested = QRegularExpression(QStringLiteral("set ([A-Za-z_0-9]+)=true")).match(message);
    if (suggested.hasMatch() && m_inputs->paramForm()->variant().findParam(suggested.captured(1).toStdString()) != nullptr) {
        const std::string flag = suggested.captured(1).toStdString();
        fixLabel = tr("Set %1 = true and run").arg(suggested.captured(1));
        fix = [this, flag] {
            m_inputs->paramForm()->setValues({{flag, true}});
            runNow();
        };
    }
    QString shown = message;
    if (shown.startsWith(id + QStringLiteral(": "))) shown.remove(0, id.size() + 2);
    m_inputs->paramForm()->setFieldNote(named.captured(1), shown, true, fixLabel, fix);
    return true;
}

}  // namespace attnscope::app
