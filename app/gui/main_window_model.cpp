// MainWindow's side of trained checkpoints: what the window shows when ModelController opened a
// model (its variant's settings, the title, a run of the chosen layer), and the Atlas tab (head
// atlas, rollout, click a head to compare it with the coverage variants).

#include "gui/main_window.h"
#include "gui/view_tabs.h"

#include "common/run_plan.h"
#include "gui/run_settings_panel.h"

#include <attnscope/variant_catalog.h>

#include "gui/compare_variants_editor.h"
#include "gui/engine_runner.h"
#include "gui/model_source.h"
#include "gui/random_projection_banner.h"
#include "gui/model_controller.h"
#include "gui/model_source_panel.h"

#include "views/coverage_editor.h"
#include "views/head_atlas.h"
#include "views/inspection_state.h"
#include "views/param_form.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnscope::app {

void MainWindow::buildModelSourceUi() {
    m_models = new ModelController(m_runner, this, m_options.showErrorDialogs);
    m_modelSource = m_models->source();
    m_sourcePanel = m_models->panel();
    m_inputs->addSourceWidget(m_sourcePanel);
    connect(m_sourcePanel, &ModelSourcePanel::sourceChanged, this, &MainWindow::uiModelSourceChanged);
    connect(m_models, &ModelController::opening, this, [this](const QString& text) { setStatusMessage(text); });
    connect(m_models, &ModelController::opened, this, &MainWindow::uiModelOpened);
    connect(m_models, &ModelController::openFailed, this, [this](const QString& text, const QString& details) {
        setStatusMessage(text, details);
        Q_EMIT modelOpenFailed(text);
    });
    connect(m_modelSource, &ModelSource::analysisProgress, this,
            [this](int permille, const QString& stage) { m_views->atlasView()->setProgress(permille, stage); });
    connect(m_modelSource, &ModelSource::atlasReady, this, &MainWindow::uiShowAtlas);
    // A run that ends disables Esc (uiRunStateChanged); queued, this runs after that handler and
    // keeps Esc live while an analysis is still running.
    const auto keepEscapeForAnalysis = [this] {
        if (m_modelSource->isAnalyzing()) m_cancelAction->setEnabled(true);
    };
    connect(m_runner, &EngineRunner::runFinished, this, keepEscapeForAnalysis, Qt::QueuedConnection);
    connect(m_runner, &EngineRunner::jobFailed, this, keepEscapeForAnalysis, Qt::QueuedConnection);
    connect(m_modelSource, &ModelSource::analysisFailed, this, [this](const QString& message, int code) {
        m_views->atlasView()->setBusy(false);
        m_cancelAction->setEnabled(m_runner->isRunning());
        const QString text =
            code == static_cast<int>(engine::ErrorCode::Cancelled)
                ? tr("Analysis cancelled.")
                : tr("Analysis failed (%1): %2")
                      .arg(QString::fromLatin1(engine::errorCodeName(static_cast<engine::ErrorCode>(code))), message);
        m_views->atlasView()->setMessage(text);
        setStatusMessage(text, message);
        Q_EMIT atlasFailed(message, code);
    });
}

void MainWindow::buildAtlasTab() {
    connect(m_views->atlasView(), &views::HeadAtlasView::analyzeRequested, this, &MainWindow::analyzeModel);
    connect(m_views->atlasView(), &views::HeadAtlasView::cancelRequested, m_modelSource, &ModelSource::cancelAnalysis);
    connect(m_views->atlasView(), &views::HeadAtlasView::headSelected, this, &MainWindow::uiCompareAtlasHead);
}

void MainWindow::openModelFolder(const QString& folder) { m_models->openFolder(folder); }

void MainWindow::uiModelOpened(const engine::ModelInfo& info, const QString& ownVariant) {
    if (!ownVariant.isEmpty()) {
        const int index = m_inputs->variantCombo()->findData(ownVariant);
        if (index >= 0) m_inputs->variantCombo()->setCurrentIndex(index);
    }
    applyModelDefaults();
    m_views->atlasView()->setAtlas(nullptr);
    const QString record = views::HeadAtlasView::trainingSummary(info);
    m_views->atlasView()->setMessage(tr("%1 is open: press Analyze to describe its heads on the input text.%2")
                                .arg(QDir(m_modelSource->folder()).dirName(), record.isEmpty() ? QString() : QLatin1Char(' ') + record));
    const QString name = QDir(m_modelSource->folder()).dirName();
    uiUpdateTitle();  // the title names the model beside the text's source
    setStatusMessage(tr("Opened the model %1 (%2, %3 layers × %4 heads).")
                         .arg(name, QString::fromStdString(info.arch))
                         .arg(info.layers)
                         .arg(info.heads));
    // Switching the source runs the chosen layer; when it was already the model, run it here.
    if (m_sourcePanel->kind() == ModelSourcePanel::Kind::ModelLayer)
        uiModelSourceChanged();
    else
        m_sourcePanel->setKind(ModelSourcePanel::Kind::ModelLayer);
    if (currentView() == View::Atlas) analyzeModel();
}

void MainWindow::uiModelSourceChanged() {
    uiShowSourceControls(m_sourcePanel->usesModel());
    if (m_variantsKnown) uiStartRun(false);
}

void MainWindow::uiShowSourceControls(bool model) {
    // The model's own tokenizer and projections replace the window's.
    const std::string tokenizer = model && m_modelSource->model() ? m_modelSource->model()->tokenizer : std::string();
    m_inputs->showModelSource(model, QString::fromStdString(tokenizer));
    if (m_views->banner()) m_views->banner()->setRandomProjections(!model);
    uiUpdateTitle();
}

void MainWindow::useSampleModel() { m_models->openSample(); }

void MainWindow::analyzeModel() {
    if (!m_modelSource->model()) {
        const QString text =
            tr("Open a model first (File ▸ Open Model…): the atlas describes a trained model's heads.");
        m_views->atlasView()->setMessage(text);
        setStatusMessage(text);
        return;
    }
    auto settings = m_views->atlasView()->coverageEditor()->settingsForNextRun();
    if (!settings) {  // the editor marks the line and says why, under the field
        setStatusMessage(m_views->atlasView()->coverageEditor()->problem());
        return;
    }
    engine::AtlasRequest request;
    request.text = m_inputs->text()->toPlainText().toStdString();
    request.settings = std::move(*settings);
    m_views->atlasView()->setBusy(true);
    m_views->atlasView()->setMessage(tr("Analysing %1…").arg(QDir(m_modelSource->folder()).dirName()));
    m_cancelAction->setEnabled(true);  // Esc cancels the analysis too (cancelRun)
    m_modelSource->analyze(std::move(request));
}

void MainWindow::uiShowAtlas(const std::shared_ptr<const engine::HeadAtlas>& atlas) {
    m_views->atlasView()->setBusy(false);
    m_cancelAction->setEnabled(m_runner->isRunning());
    m_views->atlasView()->setAtlas(atlas);
    if (m_sourcePanel->usesModel()) m_views->atlasView()->setSelectedHead(m_sourcePanel->layer(), m_views->state()->head());
    setStatusMessage(tr("Head atlas: %1 layers × %2 heads on %3 tokens in %4 s.")
                         .arg(atlas->layers)
                         .arg(atlas->heads)
                         .arg(atlas->n)
                         .arg(atlas->seconds, 0, 'f', 2));
    Q_EMIT atlasShown();
}

void MainWindow::uiCompareAtlasHead(int layer, int head) {
    const auto& atlas = m_views->atlasView()->atlas();
    if (!atlas || !m_modelSource->model()) return;
    // The settings that replace this head best (lowest output error), so the comparison shows
    // what the atlas suggests; settings that do not apply at this n are left out.
    const std::vector<const engine::CoverageSetting*> chosen =
        bestCoverageSettings(*atlas, layer, head, CompareVariantsEditor::kMaxRows);
    if (chosen.empty()) {
        setStatusMessage(tr("No coverage setting applies to layer %1, head %2 at this length.").arg(layer).arg(head));
        return;
    }

    // `full` is the head itself (its weights equal the model's attention); the rows beside it.
    m_sourcePanel->setKind(ModelSourcePanel::Kind::ModelLayer);
    {
        const QSignalBlocker block(m_sourcePanel);  // one run below, not one per control
        m_sourcePanel->setLayer(layer);
    }
    m_inputs->variantCombo()->setCurrentIndex(std::max(0, m_inputs->variantCombo()->findData(QString::fromStdString(engine::exactReference().id))));
    std::vector<engine::VariantRequest> rows;
    for (const engine::CoverageSetting* setting : chosen) rows.push_back({setting->variantId, setting->params});
    m_inputs->compareEditor()->setRows(rows);
    m_views->state()->setHead(head);
    m_views->atlasView()->setSelectedHead(layer, head);
    if (currentView() != View::Compare) showView(View::Compare);
    uiStartRun(true);  // supersedes a run the tab switch may have started with the old rows
    setStatusMessage(tr("Layer %1, head %2: full beside %3 settings with the lowest output error.")
                         .arg(layer)
                         .arg(head)
                         .arg(chosen.size()));
}

}  // namespace attnscope::app
