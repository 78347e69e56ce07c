#include "gui/window/main_window.h"
#include "gui/window/random_projection_banner.h"
#include "gui/controllers/context_controller.h"
#include "gui/controllers/generate_controller.h"

#include "common/image_file.h"
#include "common/variant_flags.h"

#include "gui/panels/compare_variants_editor.h"
#include "gui/controllers/cost_tab_controller.h"
#include "gui/engine/engine_runner.h"
#include "gui/export/export_controller.h"
#include "gui/window/help_menu.h"
#include "gui/window/tour_panel.h"
#include "gui/window/welcome_card.h"
#include "gui/window/window_geometry.h"
#include "gui/controllers/model_controller.h"
#include "gui/engine/model_source.h"
#include "gui/panels/model_source_panel.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/window/run_status_bar.h"
#include "gui/controllers/star_controller.h"
#include "gui/window/token_finder.h"

#include "views/compare/compare_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/heatmap/head_heatmap.h"
#include "views/data/heatmap_options.h"
#include "views/mask/mask_view.h"
#include "views/widgets/param_form.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSpinBox>
#include <QTabWidget>

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

// The app's resources live in a static library: reference their initialiser (outside any
// namespace) so the linker keeps them.
static void initAppResources() { Q_INIT_RESOURCE(app); }

namespace attnscope::app {

using engine::ErrorCode;
using engine::TokenizerKind;

MainWindow::MainWindow(EngineRunner* runner, const AppSettings& settings, const Options& options, QWidget* parent)
    : QMainWindow(parent), m_runner(runner), m_options(options) {
    // "--compare a,b,c": the first row takes a; the rest get rows once the variants are known.
    if (!options.compareVariant.isEmpty()) m_preferredCompare = options.compareVariant.section(QLatin1Char(','), 0, 0).trimmed();
    buildUi(settings);
    buildDocuments();
    if (!options.initialImage.isNull()) useImage(options.initialImage, options.initialImageName, options.initialImagePath);
    showView(options.initialView);  // before the variants are known: starts no run
    buildActions();
    buildWelcome(settings);
    uiRestoreHabits(settings);
    m_export->setDpi(settings.exportDpi);
    m_export->setLastFolder(settings.exportFolder);
    if (!settings.windowGeometry.isEmpty()) restoreGeometry(settings.windowGeometry);
    else fitToPrimaryScreen(this, QSize(kFirstWindowMaxWidth, kFirstWindowMaxHeight));
    if (!settings.windowState.isEmpty()) restoreState(settings.windowState, AppSettings::kWindowStateVersion);

    connect(m_runner, &EngineRunner::variantsLoaded, this, &MainWindow::uiShowVariants);
    uiRunStateChanged(false);
    m_inputs->runButton()->setEnabled(false);  // until the variants are known
    setStatusMessage(tr("Starting the engine…"));
    m_runner->requestVariants();
    if (!options.modelFolder.isEmpty()) m_models->openFolder(options.modelFolder, options.modelLayer, options.modelKeepsVariant);
}

MainWindow::~MainWindow() = default;

QString MainWindow::sampleText() {
    initAppResources();
    QFile file(QStringLiteral(":/samples/sample.txt"));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(file.readAll());
}


QString MainWindow::exportStarCyclesTo(const QString& folder) { return m_star->exportCyclesTo(folder); }
views::HelpPanel* MainWindow::helpPanel() const { return m_helpMenu->panel(); }
TourPanel* MainWindow::tourPanel() const { return m_helpMenu->tour(); }
ScalingJob* MainWindow::scalingJob() const { return m_cost->scalingJob(); }
EvalSpeedJob* MainWindow::evalSpeedJob() const { return m_cost->evalSpeedJob(); }

QHash<QString, QString> MainWindow::variantNames() const {
    QHash<QString, QString> names;
    for (const auto& v : m_inputs->variants()) names.insert(QString::fromStdString(v.id), QString::fromStdString(v.name));
    return names;
}

AppSettings MainWindow::settings() const {
    AppSettings s;
    m_inputs->captureInto(s);
    m_views->captureInto(s);
    s.exportDpi = m_export->dpi();
    s.exportFolder = m_export->lastFolder();
    s.theme = themeName();
    s.recentFiles = recentFiles();
    s.windowGeometry = saveGeometry();
    s.windowState = saveState(AppSettings::kWindowStateVersion);
    s.welcomeSeen = m_welcomeSeen;
    return s;
}

void MainWindow::buildWelcome(const AppSettings& settings) {
    m_welcomeSeen = settings.welcomeSeen;
    WelcomeCard* card = m_views->welcomeCard();
    card->setVisible(m_options.showWelcome && !m_welcomeSeen);
    connect(card, &WelcomeCard::dismissed, this, [this] { m_welcomeSeen = true; });
    connect(card, &WelcomeCard::tourRequested, this, [this] { tourPanel()->showStep(0); });
}

QString MainWindow::statusText() const { return m_status->message(); }

void MainWindow::setStatusMessage(const QString& text, const QString& details) { m_status->setMessage(text, details); }

void MainWindow::uiShowVariants(quint64, const std::vector<engine::VariantInfo>& all) {
    // A model layer's own attention is offered as such (RunSettingsPanel::setOwnAttention), never
    // as the variant that computes it.
    std::vector<engine::VariantInfo> variants;
    std::copy_if(all.begin(), all.end(), std::back_inserter(variants), [](const engine::VariantInfo& v) { return !v.modelOnly; });
    m_variantsKnown = true;
    m_inputs->setVariants(variants);
    m_views->setVariantNames(variantNames());
    m_inputs->compareEditor()->setVariants(variants, m_preferredCompare);
    // "--compare a,b,c": rows for b and c, once (not on every reload of the variants).
    for (const QString& id : m_options.compareVariant.split(QLatin1Char(','), Qt::SkipEmptyParts).mid(1))
        m_inputs->compareEditor()->addRow(id.trimmed());
    m_options.compareVariant.clear();
    m_cost->setVariants(variants);
    uiRunStateChanged(m_runner->isRunning());
    setStatusMessage(variants.empty() ? tr("The engine did not start; press Run to see why.") : tr("Ready."));
    const QStringList errors = m_inputs->paramForm()->applyTexts(m_options.params) + m_inputs->compareEditor()->applyParamTexts(m_options.compareParams);
    m_options.params.clear();
    m_options.compareParams.clear();
    if (!errors.isEmpty()) setStatusMessage(errors.join(QStringLiteral("; ")));
    if (m_options.runOnStart) uiStartRun(false);
}

void MainWindow::applyModelDefaults() {
    m_models->applySettingsTo(m_inputs->paramForm());
    for (int row = 0; row < m_inputs->compareEditor()->rowCount(); ++row) m_models->applySettingsTo(m_inputs->compareEditor()->form(row));
}

void MainWindow::showVariantForm(views::ParamForm* form) {
    // A variant that refuses a length its block does not divide (BigBird: docs/VARIANTS.md, the
    // engine refuses by default) starts in the window with its explicit `pad` ticked, so that any
    // text a person types runs; the form shows it and the result reports the padding.
    if (const engine::ParamSpec* pad = form->variant().findParam("pad"); pad && pad->type == engine::ParamType::Bool)
        form->setValues({{"pad", true}});
    m_models->applySettingsTo(form);
}

void MainWindow::uiCompareVariantChanged() {
    // The editor shows each row's schema form itself; remember the first row's choice.
    const QString id = m_inputs->compareEditor()->combo(0)->currentData().toString();
    if (!id.isEmpty()) m_preferredCompare = id;
}

MainWindow::View MainWindow::currentView() const { return m_views->current(); }

void MainWindow::showView(View view) { m_views->tabs()->setCurrentIndex(static_cast<int>(view)); }

RunController::Purpose MainWindow::runPurpose() const {
    if (currentView() == View::Compare) return RunController::Purpose::Compare;
    if (currentView() == View::Diagnostics) return RunController::Purpose::Diagnostics;
    return RunController::Purpose::Views;
}

void MainWindow::uiViewChanged() {
    // (ViewTabs has given the shown tab its result.) The Compare and Diagnostics tabs need more
    // than the main variant: fetch it once, unless a run in flight already asks for it.
    const RunController::Purpose purpose = runPurpose();
    if (!m_variantsKnown || purpose == RunController::Purpose::Views) return;
    if (m_runs->shownLacks(purpose, lastResult().get()) && !m_runs->runningFor(purpose)) uiStartRun(false);
}

quint64 MainWindow::runNow() { return uiStartRun(true); }

quint64 MainWindow::uiStartRun(bool userInitiated) { return m_runs->start(runPurpose(), userInitiated); }

void MainWindow::cancelRun() {
    if (m_runner->isRunning()) m_runner->cancel();
    if (m_modelSource->isAnalyzing()) m_modelSource->cancelAnalysis();
    if (m_generate) m_generate->cancel();
    if (m_context) m_context->cancel();
    m_cost->cancel();
}

void MainWindow::uiRunStateChanged(bool running) {
    m_inputs->runButton()->setEnabled(m_variantsKnown);
    m_runAction->setEnabled(m_variantsKnown);
    m_inputs->cancelButton()->setEnabled(running);
    m_cancelAction->setEnabled(running || uiMeasuringOrAnalysing());
    if (!running) m_status->runEnded();
}

bool MainWindow::uiMeasuringOrAnalysing() const {
    return (m_cost && m_cost->isRunning()) || (m_modelSource && m_modelSource->isAnalyzing()) ||
           (m_generate && m_generate->isGenerating()) || (m_context && m_context->isIndexing());
}

// Esc also cancels the Cost tab's measurements and the model analysis while they run.
void MainWindow::uiUpdateCancel() {
    m_cancelAction->setEnabled(m_runner->isRunning() || uiMeasuringOrAnalysing());
    // Generate sits between Run and Cancel: Cancel stops it too (and keeps what was written)
    m_inputs->cancelButton()->setEnabled(m_runner->isRunning() || (m_generate && m_generate->isGenerating()));
}

// What the window shows of its runs (RunController makes and follows them).
void MainWindow::buildRuns() {
    m_runs = new RunController(m_runner, m_inputs, m_models, m_views->diagnostics()->approximationView(), this);
    connect(m_runs, &RunController::started, this, [this](const QString& message) {
        m_status->runStarted();
        setStatusMessage(message);
        uiRunStateChanged(true);
        m_views->compareView()->setRunning(runPurpose() == RunController::Purpose::Compare);
    });
    connect(m_runs, &RunController::refused, this, [this](const QString& message) {
        setStatusMessage(message);
        if (runPurpose() == RunController::Purpose::Compare) m_views->compareView()->setProblem(message + tr(" Fix it under its field and run again (F5)."));
    });
    connect(m_runs, &RunController::progressChanged, m_status, &RunStatusBar::setProgress);
    connect(m_runs, &RunController::ended, this, [this] {
        uiRunStateChanged(false);
        m_views->compareView()->setRunning(false);
    });
    connect(m_runs, &RunController::resultReady, this, &MainWindow::uiShowResult);
    connect(m_runs, &RunController::failed, this, &MainWindow::uiShowFailure);
    connect(m_runs, &RunController::curveEnded, this, &MainWindow::setStatusMessage);
    connect(m_runs, &RunController::rerunRequested, this, &MainWindow::runNow);
    connect(m_runs, &RunController::inputsChanged, this, &MainWindow::uiUpdateFreshness);
}

void MainWindow::uiShowResult(quint64 job, std::shared_ptr<const engine::RunResult> result, int comparePanes,
                              const QString& exactNote) {
    // (the banner hidden for a result file comes back if the inputs are random projections now)
    if (std::exchange(m_bannerHiddenForFile, false) && m_views->banner())
        m_views->banner()->setRandomProjections(!m_sourcePanel->usesModel());
    m_views->showResult(result, comparePanes, exactNote);
    uiUpdateFreshness();
    m_status->showResult(*result);
    m_finder->resultChanged();  // the new tokens, marked again while Find Token is open
    Q_EMIT resultShown(job);
}

// A result file (File ▸ Open Result): shown as a finished run's, not compared with the inputs
// (they did not make it).
void MainWindow::uiShowOpenedResult(std::shared_ptr<const engine::RunResult> result, const QString& message) {
    m_runs->forgetShownInputs();
    // (its q, k, v came from the file, not from random projections: the banner would mislead)
    if (m_views->banner() && m_views->banner()->isVisible()) {
        m_views->banner()->setRandomProjections(false);
        m_bannerHiddenForFile = true;
    }
    m_views->showResult(result, 1, QString());
    uiUpdateFreshness();
    m_status->showResult(*result);
    m_finder->resultChanged();
    setStatusMessage(message);
}

void MainWindow::uiShowFailure(quint64 job, const QString& message, int code, bool userInitiated, bool besideField) {
    if (code == static_cast<int>(ErrorCode::Cancelled)) {
        setStatusMessage(tr("Run cancelled."));
        Q_EMIT runFailed(job, message, code);
        return;
    }
    const QString text = tr("Run failed (%1): %2")
                             .arg(QString::fromLatin1(engine::errorCodeName(static_cast<ErrorCode>(code))), message);
    setStatusMessage(text, message);
    // Anything not shown under its field is in the status bar always, and in a dialog when the
    // user asked for this run.
    if (!besideField && userInitiated && m_options.showErrorDialogs) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Run failed"), text, QMessageBox::Ok, this);
        box->setTextFormat(Qt::PlainText);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();  // window-modal, without a nested event loop
    }
    Q_EMIT runFailed(job, message, code);
}

void MainWindow::uiUpdateFreshness() {
    if (m_status) m_status->setOutOfDate(lastResult() && m_runs->shownOutOfDate());
}

bool MainWindow::resultOutOfDate() const { return m_status && m_status->outOfDate(); }

bool MainWindow::resultPending(View view) const { return m_views->resultPending(view); }

void MainWindow::flushPendingResult() { m_views->flushResult(); }

void MainWindow::showNextHead() { m_views->stepHead(+1); }
void MainWindow::showPreviousHead() { m_views->stepHead(-1); }

void MainWindow::openImageFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Image"), QString(), imageFileFilter() + tr(";;All files (*)"));
    if (!path.isEmpty()) openImage(path);
}

QString MainWindow::openImage(const QString& path) {
    auto picture = readImageFile(path);
    if (!picture) {
        const QString message = QString::fromStdString(picture.error().message) + tr(". The input and the shown result are unchanged.");
        setStatusMessage(message, message);
        if (m_options.showErrorDialogs) QMessageBox::warning(this, tr("Cannot open the image"), message);
        return message;
    }
    const QString name = QFileInfo(path).fileName();
    useImage(picture.value(), name, QFileInfo(path).absoluteFilePath());
    showView(View::Image);
    uiStartRun(true);
    return {};
}

void MainWindow::useImage(const QImage& picture, const QString& name, const QString& path) {
    m_inputs->useImage(picture, name, path);
    m_views->setPicture(picture);
    m_options.textSource = name;
    uiSetSourceTitle(name);
}

void MainWindow::openTextFile() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Text"), QString(), tr("Text files (*.txt *.md);;All files (*)"));
    // Same path as Recent and drops: judged by content, remembered in File → Recent.
    if (!path.isEmpty()) openPath(path);
}

}  // namespace attnscope::app
