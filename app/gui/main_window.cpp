#include "gui/main_window.h"
#include "gui/view_tabs.h"
#include "gui/run_status_bar.h"
#include "gui/run_settings_panel.h"
#include "common/run_plan.h"

#include <attnscope/result_roles.h>
#include <attnscope/variant_catalog.h>

#include "gui/compare_variants_editor.h"
#include "gui/document_controller.h"
#include "gui/engine_runner.h"
#include "gui/model_controller.h"
#include "gui/model_source.h"
#include "gui/eval_speed_job.h"
#include "gui/scaling_job.h"
#include "gui/export/export_controller.h"
#include "gui/text_autosave.h"

#include "views/background_job.h"
#include "views/compare_view.h"
#include "views/cost_view.h"
#include "gui/token_find_bar.h"
#include "gui/token_finder.h"
#include "views/notices_panel.h"
#include "views/moe/routing_view.h"
#include "views/diagnostics/approximation_view.h"
#include "views/diagnostics/diagnostics_stack.h"
#include "views/head_heatmap.h"
#include "views/heatmap_options.h"
#include "views/mask_view.h"
#include "views/token_links.h"
#include "views/heads_grid.h"
#include "views/inspection_state.h"
#include "views/param_form.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QRegularExpression>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QStringDecoder>
#include <QTabWidget>
#include <QGuiApplication>
#include <QScreen>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

// The app's resources live in a static library: reference their initialiser (outside any
// namespace) so the linker keeps them.
static void initAppResources() { Q_INIT_RESOURCE(app); }

namespace attnscope::app {

using engine::ErrorCode;
using engine::TokenizerKind;

namespace {


}  // namespace

MainWindow::MainWindow(EngineRunner* runner, const AppSettings& settings, const Options& options, QWidget* parent)
    : QMainWindow(parent), m_runner(runner), m_options(options), m_preferredVariant(settings.variantId) {
    // "--compare a,b,c": the first row takes a; the rest get rows once the variants are known.
    if (!options.compareVariant.isEmpty()) m_preferredCompare = options.compareVariant.section(QLatin1Char(','), 0, 0).trimmed();
    buildUi(settings);
    buildDocuments();
    showView(options.initialView);  // before the variants are known: starts no run
    buildActions();
    uiRestoreHabits(settings);
    m_export->setDpi(settings.exportDpi);
    m_export->setLastFolder(settings.exportFolder);
    if (!settings.windowGeometry.isEmpty()) restoreGeometry(settings.windowGeometry);
    else fitToScreen();
    if (!settings.windowState.isEmpty()) restoreState(settings.windowState, AppSettings::kWindowStateVersion);

    connect(m_runner, &EngineRunner::variantsLoaded, this, &MainWindow::uiShowVariants);
    connect(m_runner, &EngineRunner::runFinished, this, &MainWindow::uiShowResult);
    connect(m_runner, &EngineRunner::jobFailed, this, &MainWindow::uiShowFailure);
    connect(m_runner, &EngineRunner::progressChanged, this, &MainWindow::uiShowProgress);
    uiRunStateChanged(false);
    m_inputs->runButton()->setEnabled(false);  // until the variants are known
    setStatusMessage(tr("Starting the engine…"));
    m_runner->requestVariants();
    if (!options.modelFolder.isEmpty()) m_models->openFolder(options.modelFolder, options.modelLayer);
}

MainWindow::~MainWindow() = default;

QString MainWindow::sampleText() {
    initAppResources();
    QFile file(QStringLiteral(":/samples/sample.txt"));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(file.readAll());
}


QSpinBox* MainWindow::headsSpin() const { return m_inputs->headsSpin(); }
QComboBox* MainWindow::compareCombo() const { return m_inputs->compareEditor()->combo(0); }
views::ParamForm* MainWindow::compareParamForm() const { return m_inputs->compareEditor()->form(0); }
CompareVariantsEditor* MainWindow::compareEditor() const { return m_inputs->compareEditor(); }
views::ParamForm* MainWindow::paramForm() const { return m_inputs->paramForm(); }
QPlainTextEdit* MainWindow::textEdit() const { return m_inputs->text(); }
QComboBox* MainWindow::variantCombo() const { return m_inputs->variantCombo(); }

QHash<QString, QString> MainWindow::variantNames() const {
    QHash<QString, QString> names;
    for (const auto& v : m_variants) names.insert(QString::fromStdString(v.id), QString::fromStdString(v.name));
    return names;
}

AppSettings MainWindow::settings() const {
    AppSettings s;
    s.tokenizer = m_inputs->tokenizerCombo()->currentText();
    const QString variant = m_inputs->variantCombo()->currentData().toString();
    s.variantId = variant.isEmpty() ? m_preferredVariant : variant;
    s.heads = m_inputs->headsSpin()->value();
    s.headDim = m_inputs->headDimSpin()->value();
    s.seed = m_inputs->seedSpin()->value();
    const views::HeatmapOptions heatmap = m_views->heatmap()->options();
    s.heatmapColormap = heatmap.colormap;
    s.heatmapScale = views::colorScaleName(heatmap.scale);
    s.heatmapPooling = views::poolModeName(heatmap.pooling);
    s.exportDpi = m_export->dpi();
    s.exportFolder = m_export->lastFolder();
    s.theme = themeName();
    s.recentFiles = recentFiles();
    s.windowGeometry = saveGeometry();
    s.windowState = saveState(AppSettings::kWindowStateVersion);
    return s;
}

QString MainWindow::statusText() const { return m_status->message(); }

void MainWindow::setStatusMessage(const QString& text, const QString& details) { m_status->setMessage(text, details); }

void MainWindow::uiShowVariants(quint64, const std::vector<engine::VariantInfo>& variants) {
    m_variants = variants;
    m_variantsKnown = true;
    QHash<QString, QString> names;
    {
        const QSignalBlocker block(m_inputs->variantCombo());
        m_inputs->variantCombo()->clear();
        for (const auto& v : m_variants) {
            const QString id = QString::fromStdString(v.id);
            names.insert(id, QString::fromStdString(v.name));
            m_inputs->variantCombo()->addItem(QString::fromStdString(v.name), id);
            m_inputs->variantCombo()->setItemData(m_inputs->variantCombo()->count() - 1, QString::fromStdString(v.summary),
                                        Qt::ToolTipRole);
        }
        m_inputs->variantCombo()->setCurrentIndex(std::max(0, m_inputs->variantCombo()->findData(m_preferredVariant)));
    }
    m_views->heatmap()->setVariantNames(names);
    m_views->maskView()->setVariantNames(names);
    m_views->compareView()->setVariantNames(names);
    uiShowExplorerVariants();
    uiVariantChanged();
    uiRunStateChanged(m_runner->isRunning());
    setStatusMessage(m_variants.empty() ? tr("The engine did not start; press Run to see why.") : tr("Ready."));
    const QStringList errors =
        applyParamTexts(m_inputs->paramForm(), m_options.params) + applyParamTexts(m_inputs->compareEditor()->form(0), m_options.compareParams);
    m_options.params.clear();
    m_options.compareParams.clear();
    if (!errors.isEmpty()) setStatusMessage(errors.join(QStringLiteral("; ")));
    if (m_options.runOnStart) uiStartRun(false);
}

void MainWindow::fitToScreen() {
    // The first start: most of the screen (the settings column and the views both need room),
    // capped so that a large monitor does not get a window wider than the layout uses; centred.
    const QScreen* screen = QGuiApplication::primaryScreen();
    if (!screen) return;
    const QRect available = screen->availableGeometry();
    const QSize size(std::min(available.width() * 9 / 10, kFirstWindowMaxWidth),
                     std::min(available.height() * 9 / 10, kFirstWindowMaxHeight));
    resize(size);
    move(available.center() - QPoint(size.width() / 2, size.height() / 2));
}

void MainWindow::uiVariantChanged() {
    const QString id = m_inputs->variantCombo()->currentData().toString();
    const auto it = std::find_if(m_variants.begin(), m_variants.end(),
                                 [&](const auto& v) { return QString::fromStdString(v.id) == id; });
    if (it == m_variants.end()) {
        m_inputs->variantInfo()->clear();
        m_inputs->paramForm()->setVariant({});
        return;
    }
    m_inputs->variantInfo()->setText(QString::fromStdString(it->summary) + QLatin1Char('\n') + QString::fromStdString(it->paper));
    m_inputs->paramForm()->setVariant(*it);
    applyModelDefaults();
}

void MainWindow::applyModelDefaults() {
    // An open model's own settings for this variant (Transformer-XL's segment and memory).
    if (const engine::ParamValues* defaults = m_models->defaultsFor(m_inputs->paramForm()->variant().id))
        m_inputs->paramForm()->setValues(*defaults);
}

void MainWindow::uiCompareVariantChanged() {
    // The editor shows each row's schema form itself; remember the first row's choice.
    const QString id = m_inputs->compareEditor()->combo(0)->currentData().toString();
    if (!id.isEmpty()) m_preferredCompare = id;
}

QStringList MainWindow::applyParamTexts(views::ParamForm* form, const QStringList& texts) {
    QStringList errors;
    engine::ParamValues values;
    const engine::VariantInfo& info = form->variant();
    for (const QString& text : texts) {
        const qsizetype eq = text.indexOf(QLatin1Char('='));
        const std::string name = text.left(eq).trimmed().toStdString();
        const engine::ParamSpec* spec = eq > 0 ? info.findParam(name) : nullptr;
        if (!spec) {
            errors << tr("%1: not a parameter of %2").arg(text, QString::fromStdString(info.id));
            continue;
        }
        auto value = engine::parseParamValue(*spec, text.mid(eq + 1).trimmed().toStdString());
        if (!value) {
            errors << QString::fromStdString(value.error().message);
            continue;
        }
        values[name] = *value;
    }
    form->setValues(values);
    return errors;
}

MainWindow::View MainWindow::currentView() const { return static_cast<View>(m_views->tabs()->currentIndex()); }

void MainWindow::showView(View view) { m_views->tabs()->setCurrentIndex(static_cast<int>(view)); }

bool MainWindow::uiCompareNeedsRun() const {
    if (currentView() != View::Compare || !m_variantsKnown || m_inputs->compareEditor()->ids().isEmpty()) return false;
    if (!m_result) return true;
    // Also re-run when the form changed since: the shown variants must match what the tab says.
    const QStringList wanted = QStringList{m_inputs->variantCombo()->currentData().toString()} + m_inputs->compareEditor()->ids();
    const auto& results = m_result->results;
    if (results.size() < static_cast<std::size_t>(wanted.size())) return true;
    for (int i = 0; i < wanted.size(); ++i)
        if (QString::fromStdString(results[static_cast<std::size_t>(i)].variantId) != wanted[i]) return true;
    return false;
}

bool MainWindow::uiDiagnosticsNeedsRun() const {
    const QString id = m_inputs->variantCombo()->currentData().toString();
    if (currentView() != View::Diagnostics || !m_variantsKnown || !needsExactReference(id.toStdString())) return false;
    if (!m_result || m_result->results.empty() || QString::fromStdString(m_result->results[0].variantId) != id) return true;
    return engine::exactReferenceIndex(*m_result) < 0;
}

void MainWindow::uiViewChanged() {
    if (m_shownView != currentView()) m_resultTabs.park(static_cast<int>(m_shownView));
    m_shownView = currentView();
    uiDeliverResult(currentView());
    // A run in flight for this tab already asks for the pair; otherwise fetch it once.
    if (uiCompareNeedsRun() && !(m_runner->isRunning() && m_currentRunCompares)) uiStartRun(false);
    if (uiDiagnosticsNeedsRun() && !(m_runner->isRunning() && m_currentRunHasExact)) uiStartRun(false);
}

quint64 MainWindow::runNow() { return uiStartRun(true); }

quint64 MainWindow::uiStartRun(bool userInitiated) {
    const bool compare = currentView() == View::Compare && !m_inputs->compareEditor()->ids().isEmpty();
    m_inputs->paramForm()->clearFieldNotes();
    // Every list that does not parse is marked under its field at once, not one per Run.
    const QStringList badLists = m_inputs->paramForm()->invalidParams();
    for (const QString& name : badLists)
        m_inputs->paramForm()->setFieldNote(name, tr("Expected comma-separated numbers, e.g. 0, 7."));
    QStringList invalid = badLists;
    if (compare) invalid += m_inputs->compareEditor()->invalidParams();
    if (!invalid.isEmpty()) {
        setStatusMessage(tr("Parameter %1: expected comma-separated numbers.").arg(invalid.join(QStringLiteral(", "))));
        return 0;
    }
    engine::RunRequest request;
    m_inputs->fillRequest(request);
    m_models->applyTo(request);
    engine::VariantRequest variant;
    const QString id = m_inputs->variantCombo()->currentData().toString();
    variant.id = (id.isEmpty() ? m_preferredVariant : id).toStdString();
    variant.params = m_inputs->paramForm()->values();
    request.variants.push_back(std::move(variant));
    uiAddCompareVariants(request, compare);
    m_currentRunCompares = compare;
    // The Diagnostics tab's approximation view needs exact softmax on the same Q, K, V.
    m_currentRunHasExact = currentView() == View::Diagnostics && needsExactReference(request.variants[0].id);
    if (m_currentRunHasExact) request.variants.push_back(exactReferenceLike(request.variants[0]));
    if (m_curveJob != 0) {  // this run supersedes the curve's
        m_curveJob = 0;
        m_views->diagnostics()->approximationView()->setErrorCurveFailed(tr("superseded by a new run"));
    }

    m_currentJob = m_runner->requestRun(std::move(request));
    m_currentJobByUser = userInitiated;
    m_runSignature = inputSignature();
    m_status->runStarted();
    setStatusMessage(tr("Running…"));
    uiRunStateChanged(true);
    return m_currentJob;
}

void MainWindow::cancelRun() {
    if (m_runner->isRunning()) m_runner->cancel();
    if (m_modelSource->isAnalyzing()) m_modelSource->cancelAnalysis();
    if (m_scalingJob->isRunning()) m_scalingJob->cancel();
    if (m_evalSpeedJob->isRunning()) m_evalSpeedJob->cancel();
}

void MainWindow::uiRunStateChanged(bool running) {
    m_inputs->runButton()->setEnabled(m_variantsKnown);
    m_runAction->setEnabled(m_variantsKnown);
    m_inputs->cancelButton()->setEnabled(running);
    // Esc also cancels the Cost tab's measurements and the model analysis while they run.
    m_cancelAction->setEnabled(running || (m_scalingJob && m_scalingJob->isRunning()) ||
                               (m_evalSpeedJob && m_evalSpeedJob->isRunning()) ||
                               (m_modelSource && m_modelSource->isAnalyzing()));
    if (!running) m_status->runEnded();
}

void MainWindow::uiShowProgress(quint64 job, int permille, const QString& stage) {
    if (job != m_currentJob && job != m_curveJob) return;
    m_status->setProgress(permille, stage);
}

void MainWindow::uiShowResult(quint64 job, std::shared_ptr<const engine::RunResult> result) {
    if (job != 0 && job == m_curveJob && result) return uiShowErrorCurve(result);
    if (job != m_currentJob || !result) return;
    std::shared_ptr<const engine::RunResult> previous = std::move(m_result);
    m_result = std::move(result);
    m_shownSignature = m_runSignature;
    uiUpdateFreshness();
    uiRunStateChanged(false);
    // Every tab's view lets go of the old result first (cheap), so the selection changes below
    // redraw nothing; then only the shown tab takes the new one. A hidden tab's view takes it when
    // the tab is first shown (uiViewChanged), so a long result costs one view's work here.
    // Views that never took the old result hold none: their plots are not redrawn for nothing.
    if (m_views->maskView()->panelQuery() >= 0 && m_pendingQuery < 0) m_pendingQuery = m_views->maskView()->panelQuery();
    m_pendingComparePanes = m_currentRunCompares ? m_comparePlan.panes() : 0;
    m_pendingExactNote = QString::fromStdString(m_comparePlan.exactNote());
    m_resultTabs.setResult(m_result);
    // Keep the selected head when it still exists, so re-runs can be compared head by head.
    const std::int64_t heads = m_result->heads;
    m_views->state()->setResultIndex(0);
    m_views->state()->setHead(
        static_cast<int>(std::clamp<std::int64_t>(m_views->state()->head(), 0, std::max<std::int64_t>(heads - 1, 0))));
    uiDeliverResult(currentView());    // first: its head is the first job of the background thread
    m_views->headsGrid()->setResult(m_result);  // above the tabs: always shown
    // NOTE: freeing a long result unmaps every page of its weights (268 MB for 4 heads of 4096
    // tokens): the views have let go of it, so the last reference goes on the background thread.
    if (previous)
        views::backgroundThreadPool()->start([previous = std::move(previous)]() mutable { previous.reset(); });

    double seconds = 0;
    std::uint64_t peak = 0;
    for (const auto& r : m_result->results) {
        seconds += r.counters.seconds;
        peak = std::max(peak, r.counters.peakBytes);
    }
    m_status->setCounters(seconds, peak);
    const QString tokenizer = QString::fromLatin1(engine::tokenizerName(m_result->input.kind));
    const QString summary = m_result->n == 1
                                ? tr("1 token (%1), %2 heads").arg(tokenizer).arg(heads)
                                : tr("%1 tokens (%2), %3 heads").arg(m_result->n).arg(tokenizer).arg(heads);
    if (m_result->warnings.empty()) {
        setStatusMessage(summary);
    } else {
        QStringList warnings;
        for (const auto& w : m_result->warnings) warnings << QString::fromStdString(w);
        setStatusMessage(tr("%1 — warning: %2").arg(summary, warnings.join(QStringLiteral("; "))),
                         warnings.join(QLatin1Char('\n')));
    }
    m_finder->resultChanged();  // the new tokens, marked again while Find Token is open
    Q_EMIT resultShown(job);
}

bool MainWindow::resultPending(View view) const { return m_resultTabs.pending(static_cast<int>(view)); }

void MainWindow::uiDeliverResult(View view) { m_resultTabs.deliver(static_cast<int>(view)); }

void MainWindow::flushPendingResult() {
    m_resultTabs.flush();
    m_views->headsGrid()->finishPooling();
}

// The tabs that show runs, each with how it takes, parks and finishes a result.
void MainWindow::registerResultTabs() {
    const auto add = [this](View view, ResultTab tab) { m_resultTabs.add(static_cast<int>(view), std::move(tab)); };
    add(View::Heatmap, {m_views->heatmap(), [this](const ResultTab::Run& run) { m_views->heatmap()->setResult(run); }, {},
                        [this] { m_views->heatmap()->finishPooling(); }});
    add(View::Mask, {m_views->maskView(),
                     [this](const ResultTab::Run& run) {
                         m_views->maskView()->setResult(run);
                         // A session's query, or the row panel shown before the result changed.
                         if (run && m_pendingQuery >= 0 && m_pendingQuery < run->n) m_views->maskView()->showQuery(m_pendingQuery);
                         if (run) m_pendingQuery = -1;
                     },
                     [this] {
                         if (m_views->maskView()->panelQuery() >= 0 && m_pendingQuery < 0) m_pendingQuery = m_views->maskView()->panelQuery();
                         m_views->maskView()->setResult(nullptr);
                     },
                     [this] { m_views->maskView()->finishBuilding(); }});
    add(View::Compare, {m_views->compareView(),
                        [this](const ResultTab::Run& run) {
                            if (run) m_views->compareView()->setExactNote(m_pendingExactNote);
                            m_views->compareView()->setResult(run, run ? m_pendingComparePanes : 0);
                        },
                        [this] { m_views->compareView()->setResult(nullptr); },
                        [this] {
                            m_views->compareView()->differenceMap();  // both wait for what is computed in the background
                            m_views->compareView()->errorPanel();
                        }});
    add(View::Diagnostics, {m_views->diagnostics(), [this](const ResultTab::Run& run) { m_views->diagnostics()->setResult(run); }, {}, {}});
    add(View::Links, {m_views->tokenLinks(), [this](const ResultTab::Run& run) { m_views->tokenLinks()->setResult(run); },
                      [this] { m_views->tokenLinks()->setResult(nullptr); }, {}});
    add(View::Cost, {m_views->costView(), [this](const ResultTab::Run& run) { m_views->costView()->setResult(run); }, {}, {}});
    add(View::Experts, {m_views->routingView(),
                        [this](const ResultTab::Run& run) {
                            if (run) m_views->routingView()->setTokens(run->input, run->projection.seed);
                            else m_views->routingView()->clear();
                        },
                        {}, {}});
    // (the Atlas tab shows the model's analysis, not runs)
}

void MainWindow::uiStepHead(int delta) {
    if (!m_result || m_result->heads <= 0) return;
    const int heads = static_cast<int>(m_result->heads);
    m_views->state()->setHead(std::clamp(m_views->state()->head() + delta, 0, heads - 1));
}

void MainWindow::showNextHead() { uiStepHead(+1); }
void MainWindow::showPreviousHead() { uiStepHead(-1); }

void MainWindow::openTextFile() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open Text"), QString(), tr("Text files (*.txt *.md);;All files (*)"));
    // Same path as Recent and drops: judged by content, remembered in File → Recent.
    if (!path.isEmpty()) openPath(path);
}

}  // namespace attnscope::app
