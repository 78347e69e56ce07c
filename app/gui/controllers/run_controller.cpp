#include "gui/controllers/run_controller.h"

#include "gui/panels/compare_variants_editor.h"
#include "gui/engine/engine_runner.h"
#include "gui/panels/image_input_panel.h"
#include "gui/controllers/model_controller.h"
#include "gui/engine/model_source.h"
#include "gui/panels/model_source_panel.h"
#include "gui/panels/run_settings_panel.h"

#include "views/diagnostics/approximation_view.h"
#include "views/widgets/param_form.h"

#include <attnscope/diagnostics.h>
#include <attnscope/result_roles.h>

#include <QComboBox>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSpinBox>

#include <functional>

namespace attnscope::app {

using engine::ErrorCode;

RunController::RunController(EngineRunner* runner, RunSettingsPanel* inputs, ModelController* models,
                             views::ApproximationView* approximation, QObject* parent)
    : QObject(parent), m_runner(runner), m_inputs(inputs), m_models(models), m_approximation(approximation) {
    connect(m_runner, &EngineRunner::runFinished, this, &RunController::finished);
    connect(m_runner, &EngineRunner::jobFailed, this, &RunController::jobFailed);
    connect(m_runner, &EngineRunner::progressChanged, this, [this](quint64 job, int permille, const QString& stage) {
        if (job == m_job || job == m_curveJob) Q_EMIT progressChanged(permille, stage);
    });
    connect(m_approximation, &views::ApproximationView::errorCurveRequested, this, &RunController::startErrorCurve);
    watchInputs();
}

quint64 RunController::start(Purpose purpose, bool userInitiated) {
    const bool compare = purpose == Purpose::Compare && !m_inputs->compareEditor()->ids().isEmpty();
    const QStringList invalid = m_inputs->markInvalidParams(compare);
    if (!invalid.isEmpty()) {
        Q_EMIT refused(tr("Parameter %1: expected comma-separated numbers.").arg(invalid.join(QStringLiteral(", "))));
        return 0;
    }
    engine::RunRequest request;
    m_inputs->fillRequest(request);
    m_models->applyTo(request);
    // A model layer's own attention is asked of the model, not run as a variant; in a comparison
    // on a model layer it is the first pane and what the others are measured against.
    engine::ModelLayerSource* layer = request.model();
    const bool offered = layer && m_inputs->ownAttentionOffered();
    const bool own = offered && m_inputs->ownAttentionChosen();
    if (layer) layer->ownAttention = own || (compare && offered);
    if (!own) request.variants.push_back(m_inputs->variantRequest());
    if (compare) m_comparePlan.addTo(request.variants, m_inputs->compareEditor()->requests(), offered);
    else m_comparePlan.clear();
    m_compares = compare;
    // The Diagnostics tab's approximation view needs exact softmax on the same Q, K, V.
    m_hasExact = purpose == Purpose::Diagnostics && !own && engine::diagnosticsNeedExactReference(request.variants[0].id);
    if (m_hasExact) request.variants.push_back(exactReferenceLike(request.variants[0]));
    if (m_curveJob != 0) {  // this run supersedes the curve's
        m_curveJob = 0;
        m_approximation->setErrorCurveFailed(tr("superseded by a new run"));
    }
    m_job = m_runner->requestRun(std::move(request));
    m_purpose = purpose;
    m_byUser = userInitiated;
    m_runSignature = inputSignature();
    Q_EMIT started(tr("Running…"));
    return m_job;
}

bool RunController::shownLacks(Purpose purpose, const engine::RunResult* shown) const {
    const QString id = m_inputs->variantCombo()->currentData().toString();
    if (purpose == Purpose::Compare) {
        // Also when the rows changed since: the shown variants must be what the tab says.
        const QStringList compared = m_inputs->compareEditor()->ids();
        if (compared.isEmpty()) return false;
        if (!shown) return true;
        // On a model layer the own attention comes first, then the chosen variant (unless it is
        // the own attention) and the compared ones.
        const bool model = m_models->usesModel() && m_inputs->ownAttentionOffered();
        if (model && shown->ownAttention != 0) return true;
        const QStringList wanted = (model && m_inputs->ownAttentionChosen() ? QStringList{} : QStringList{id}) + compared;
        const std::size_t first = model ? 1 : 0;
        if (shown->results.size() < first + static_cast<std::size_t>(wanted.size())) return true;
        for (int i = 0; i < wanted.size(); ++i)
            if (QString::fromStdString(shown->results[first + static_cast<std::size_t>(i)].variantId) != wanted[i]) return true;
        return false;
    }
    if (purpose == Purpose::Diagnostics) {
        if (!engine::diagnosticsNeedExactReference(id.toStdString())) return false;
        if (!shown || shown->results.empty() || QString::fromStdString(shown->results[0].variantId) != id) return true;
        return engine::exactReferenceIndex(*shown) < 0;
    }
    return !shown;
}

bool RunController::runningFor(Purpose purpose) const {
    if (!m_runner->isRunning()) return false;
    if (purpose == Purpose::Compare) return m_compares;
    if (purpose == Purpose::Diagnostics) return m_hasExact;
    return true;
}

void RunController::finished(quint64 job, std::shared_ptr<const engine::RunResult> result) {
    if (!result) return;
    if (job != 0 && job == m_curveJob) return curveFinished(*result);
    if (job != m_job) return;
    m_shownSignature = m_runSignature;
    Q_EMIT ended();
    Q_EMIT resultReady(job, std::move(result), m_compares ? m_comparePlan.panes() : 0,
                       QString::fromStdString(m_comparePlan.exactNote()));
}

void RunController::jobFailed(quint64 job, const QString& message, int code) {
    if (job != 0 && job == m_curveJob) {
        m_curveJob = 0;
        Q_EMIT ended();
        m_approximation->setErrorCurveFailed(message);
        Q_EMIT curveEnded(tr("Error curve not computed: %1").arg(message), message);
        return;
    }
    if (job != m_job) return;
    if (m_compares && m_comparePlan.dropExactAfter(static_cast<ErrorCode>(code), message.toStdString())) {
        start(m_purpose, m_byUser);  // again, without the exact run that put it over budget
        return;
    }
    Q_EMIT ended();
    // A parameter's problem is shown under its field, with the fix when the engine names one.
    const bool besideField = code == static_cast<int>(ErrorCode::InvalidArgument) && showParameterProblem(message);
    Q_EMIT failed(job, message, code, m_byUser, besideField);
}

bool RunController::showParameterProblem(const QString& message) {
    // "bigbird: the block form needs n = 14 to be a multiple of parameter 'block' = 4 (set
    // pad=true to pad …)": the engine names the parameter, and the fix when there is one.
    views::ParamForm* form = m_inputs->paramForm();
    const QString id = m_inputs->variantCombo()->currentData().toString();
    if (message.contains(QLatin1Char(':')) && !message.startsWith(id + QLatin1Char(':'))) return false;  // a compared variant's
    const QRegularExpressionMatch named = QRegularExpression(QStringLiteral("parameter '([A-Za-z_0-9]+)'")).match(message);
    if (!named.hasMatch() || form->variant().findParam(named.captured(1).toStdString()) == nullptr) return false;
    QString fixLabel;
    std::function<void()> fix;
    const QRegularExpressionMatch suggested = QRegularExpression(QStringLiteral("set ([A-Za-z_0-9]+)=true")).match(message);
    if (suggested.hasMatch() && form->variant().findParam(suggested.captured(1).toStdString()) != nullptr) {
        const std::string flag = suggested.captured(1).toStdString();
        fixLabel = tr("Set %1 = true and run").arg(suggested.captured(1));
        fix = [this, form, flag] {
            form->setValues({{flag, true}});
            Q_EMIT rerunRequested();
        };
    }
    QString shown = message;
    if (shown.startsWith(id + QStringLiteral(": "))) shown.remove(0, id.size() + 2);
    form->setFieldNote(named.captured(1), shown, true, fixLabel, fix);
    return true;
}

void RunController::startErrorCurve(const QString& variantId, const QString& paramName, const QVector<double>& values,
                                    double qkNorm) {
    // NOTE: a new request supersedes (cancels) the runner's current one; let a run in flight finish.
    if (m_runner->isRunning() || values.isEmpty()) {
        m_approximation->setErrorCurveFailed(values.isEmpty() ? tr("no values") : tr("a run is in progress; try again when it ends"));
        return;
    }
    // Same input, Q/K/V and seed as the shown result; the variant's other parameters as in the form.
    engine::RunRequest request;
    m_inputs->fillRequest(request);
    m_models->applyTo(request);
    const engine::ParamValues base =
        m_inputs->variantCombo()->currentData().toString() == variantId ? m_inputs->paramForm()->values() : engine::ParamValues{};
    request.variants = errorCurveVariants(variantId.toStdString(), base, std::vector<double>(values.begin(), values.end()));
    request.projection.qkNorm = qkNorm;  // (the exact reference in the same request sees the same Q, K)
    m_curveVariant = variantId;
    m_curveParam = paramName;
    m_curveValues = values;
    m_curveJob = m_runner->requestRun(std::move(request));
    Q_EMIT started(tr("Computing the error curve of %1 (%2 runs)…").arg(variantId).arg(values.size()));
}

void RunController::curveFinished(const engine::RunResult& result) {
    m_curveJob = 0;
    Q_EMIT ended();
    // results: one per value in request order, and the exact reference (errorCurveVariants).
    const auto& results = result.results;
    const int exact = engine::exactReferenceIndex(result);
    QVector<double> values, errors;
    for (int i = 0; exact >= 0 && i < m_curveValues.size() && i < static_cast<int>(results.size()); ++i) {
        if (i == exact) continue;
        values << m_curveValues[i];
        errors << views::ApproximationView::meanRowL1Error(results[static_cast<std::size_t>(i)],
                                                           results[static_cast<std::size_t>(exact)]);
    }
    m_approximation->setErrorCurve(m_curveVariant, m_curveParam, values, errors);
    QStringList warnings;
    for (const auto& w : result.warnings) warnings << QString::fromStdString(w);
    Q_EMIT curveEnded(warnings.isEmpty()
                          ? tr("Error curve of %1: %2 points.").arg(m_curveVariant).arg(values.size())
                          : tr("Error curve of %1 — warning: %2").arg(m_curveVariant, warnings.join(QStringLiteral("; "))),
                      warnings.join(QLatin1Char('\n')));
}

QString RunController::inputSignature() const {
    QStringList parts;
    const ModelSourcePanel* panel = m_models->panel();
    parts << m_inputs->text()->toPlainText() << m_inputs->tokenizerCombo()->currentData().toString()
          << QString::number(m_inputs->headsSpin()->value()) << QString::number(m_inputs->headDimSpin()->value())
          << QString::number(m_inputs->seedSpin()->value()) << QString::number(static_cast<int>(panel->kind()))
          << QString::number(panel->layer()) << m_models->source()->folder() << m_inputs->variantCombo()->currentData().toString()
          << (m_inputs->imageIsInput() ? m_inputs->imageInput()->signature() : QString());
    for (const auto& [name, value] : m_inputs->paramForm()->values())
        parts << QString::fromStdString(name + "=" + engine::formatParamValue(value));
    return parts.join(QChar(0x1F));
}

bool RunController::shownOutOfDate() const { return !m_shownSignature.isEmpty() && inputSignature() != m_shownSignature; }

void RunController::watchInputs() {
    const auto changed = [this] { Q_EMIT inputsChanged(); };
    connect(m_inputs->text(), &QPlainTextEdit::textChanged, this, changed);
    connect(m_inputs->tokenizerCombo(), &QComboBox::currentIndexChanged, this, changed);
    connect(m_inputs->variantCombo(), &QComboBox::currentIndexChanged, this, changed);
    for (QSpinBox* spin : {m_inputs->headsSpin(), m_inputs->headDimSpin(), m_inputs->seedSpin()})
        connect(spin, &QSpinBox::valueChanged, this, changed);
    connect(m_inputs->paramForm(), &views::ParamForm::valuesChanged, this, changed);
    connect(m_models->panel(), &ModelSourcePanel::sourceChanged, this, changed);
    connect(m_inputs, &RunSettingsPanel::inputChanged, this, changed);
}

}  // namespace attnscope::app
