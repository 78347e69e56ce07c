// MainWindow's side of trained checkpoints: what the window shows when ModelController opened a
// model (its variant's settings, the title, a run of the chosen layer), and how the Atlas tab's
// controller (AtlasController) is tied to the status bar, Esc and the Compare tab.

#include "gui/window/main_window.h"
#include "gui/window/welcome_card.h"

#include "gui/controllers/atlas_controller.h"
#include "gui/controllers/context_controller.h"
#include "gui/engine/engine_runner.h"
#include "gui/controllers/generate_controller.h"
#include "gui/controllers/model_controller.h"
#include "gui/engine/model_source.h"
#include "gui/panels/model_source_panel.h"
#include "gui/window/random_projection_banner.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/window/view_tabs.h"

#include "views/atlas/head_atlas.h"

#include <QComboBox>
#include <QDir>
#include <QPlainTextEdit>
#include <QSignalBlocker>
#include <QTextCursor>

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
    // A run that ends disables Esc (uiRunStateChanged); queued, this runs after that handler and
    // keeps Esc live while an analysis is still running.
    connect(m_runner, &EngineRunner::runFinished, this, &MainWindow::uiUpdateCancel, Qt::QueuedConnection);
    connect(m_runner, &EngineRunner::jobFailed, this, &MainWindow::uiUpdateCancel, Qt::QueuedConnection);
    buildGenerateUi();
}

// Generate (Ctrl+G) beside Run: the run on the written sequence marks its tokens and selects the
// row the newest was written from (what the model looked at when it wrote it).
void MainWindow::buildGenerateUi() {
    m_generate = new GenerateController(m_runner, m_inputs, m_models, this);
    m_inputs->addSourceWidget(m_generate->box());
    m_inputs->addBesideRun(m_generate->button());
    connect(m_generate, &GenerateController::report, this, [this](const QString& text) { setStatusMessage(text); });
    connect(m_generate, &GenerateController::busyChanged, this, &MainWindow::uiUpdateCancel);
    connect(m_generate, &GenerateController::runRequested, this, [this] {
        m_sourcePanel->setKind(ModelSourcePanel::Kind::ModelLayer);
        runNow();
    });
    // while it writes, the heatmap (or the links) follows the newest token's row
    connect(m_generate, &GenerateController::liveRun, this,
            [this](const std::shared_ptr<const engine::RunResult>& run, const QVector<int>& written) {
                if (!m_views->showGrowingRun(run)) return;
                m_views->markTokens(written);
                m_views->goToToken(static_cast<int>(run->n) - 1);
            });
    connect(m_models, &ModelController::opened, m_generate, [this](const engine::ModelInfo& info) { m_generate->modelChanged(&info); });
    connect(this, &MainWindow::resultShown, m_generate, [this] {
        const QVector<int> written = m_generate->takeWrittenTokens();
        if (written.isEmpty()) return;
        m_views->markTokens(written);
        // the row the newest token was written from (the position before it): what the model looked at
        m_views->goToToken(written.back() - 1);
    });
}

void MainWindow::buildAtlasTab() {
    m_atlas = new AtlasController(m_views->atlasView(), m_models, m_inputs, m_views->state(), this);
    connect(m_atlas, &AtlasController::report, this, &MainWindow::setStatusMessage);
    connect(m_atlas, &AtlasController::busyChanged, this, &MainWindow::uiUpdateCancel);
    connect(m_atlas, &AtlasController::atlasShown, this, &MainWindow::atlasShown);
    connect(m_atlas, &AtlasController::atlasFailed, this, &MainWindow::atlasFailed);
    connect(m_atlas, &AtlasController::compareRequested, this, [this](int layer, int head, int rows) {
        if (currentView() != View::Compare) showView(View::Compare);
        uiShowSourceControls(true);  // the layer's own attention, described for this layer
        uiStartRun(true);  // supersedes a run the tab switch may have started with the old rows
        setStatusMessage(tr("Layer %1, head %2: the model's own attention beside %3 settings with the lowest output error.")
                             .arg(layer)
                             .arg(head)
                             .arg(rows));
    });
}

void MainWindow::buildContextTab() {
    m_context = new ContextController(m_views->contextView(), m_modelSource, m_runner, this);
    connect(m_context, &ContextController::report, this, &MainWindow::setStatusMessage);
    connect(m_context, &ContextController::busyChanged, this, &MainWindow::uiUpdateCancel);
}

void MainWindow::openModelFolder(const QString& folder) { m_models->openFolder(folder); }

void MainWindow::uiModelOpened(const engine::ModelInfo& info, bool keepVariant) {
    if (!info.capturedText.empty()) showCapturedText(QString::fromStdString(info.capturedText));
    m_atlas->modelOpened(views::HeadAtlasView::trainingSummary(info));
    m_context->modelOpened();
    const QString name = QDir(m_modelSource->folder()).dirName();
    setStatusMessage(tr("Opened the model %1 (%2, %3 layers × %4 heads).")
                         .arg(name, QString::fromStdString(info.familyName.empty() ? info.arch : info.familyName))
                         .arg(info.layers)
                         .arg(info.heads));
    // The source is this model's layer: its own attention is offered (and, unless a session or
    // --variant chose a variant, shown), and every form takes its settings (uiShowSourceControls).
    {
        const QSignalBlocker quiet(m_sourcePanel);
        m_sourcePanel->setKind(ModelSourcePanel::Kind::ModelLayer);
    }
    uiShowSourceControls(true);
    if (!keepVariant) m_inputs->chooseOwnAttention();
    if (m_variantsKnown) uiStartRun(false);
    if (currentView() == View::Atlas) analyzeModel();
}

void MainWindow::showCapturedText(const QString& text) {
    // Every pass runs on the file's own tokens: the text box shows them. Replaced through the
    // cursor, so Ctrl+Z brings the typed text back.
    QPlainTextEdit* edit = m_inputs->text();
    if (edit->toPlainText() == text) return;
    QTextCursor cursor(edit->document());
    cursor.select(QTextCursor::Document);
    cursor.insertText(text);
}

void MainWindow::uiModelSourceChanged() {
    uiShowSourceControls(m_sourcePanel->usesModel());
    if (m_variantsKnown) uiStartRun(false);
}

std::optional<std::vector<QString>> MainWindow::ownAttentionSummaries() const {
    const auto& model = m_modelSource->model();
    if (!model || !m_sourcePanel->usesModel() || model->layerAttention.empty()) return std::nullopt;
    std::vector<QString> summaries;
    for (const auto& layer : model->layerAttention) summaries.push_back(QString::fromStdString(layer.summary));
    return summaries;
}

void MainWindow::uiShowSourceControls(bool model) {
    // The model's own tokenizer and projections replace the window's.
    const engine::ModelInfo* info = model && m_modelSource->model() ? &*m_modelSource->model() : nullptr;
    std::optional<engine::GridShape> grid;
    if (info && info->imageSize > 0) {  // a vision model cuts the picture into its own patches
        grid = engine::GridShape{engine::ImageTokenMode::Patches, info->imageSize / info->patchSize,
                                 info->imageSize / info->patchSize, info->prefixTokens};
    }
    m_inputs->showModelSource(model, QString::fromStdString(info ? info->tokenizer : std::string()), grid);
    m_inputs->setOwnAttentionLayer(m_sourcePanel->layer());
    m_inputs->setOwnAttention(ownAttentionSummaries());
    applyModelDefaults();  // the source's causality and settings, on every form
    if (m_views->banner()) m_views->banner()->setRandomProjections(!model);
    m_views->welcomeCard()->setShowing(info ? QDir(QString::fromStdString(info->folder)).dirName() : QString());
    uiUpdateTitle();
}

void MainWindow::useSampleModel() { m_models->openSample(); }

void MainWindow::analyzeModel() { m_atlas->analyze(); }

}  // namespace attnscope::app
