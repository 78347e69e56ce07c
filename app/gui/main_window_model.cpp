// MainWindow: trained checkpoints as the Q/K/V source (File ▸ Open Model…, the "Q, K, V source"
// box) and the Atlas tab (head atlas, rollout, click a head to compare it with the coverage
// variants). Kept apart from main_window.cpp so the checkpoint wiring stays in one place.

#include "gui/main_window.h"

#include "common/run_plan.h"
#include "gui/run_settings_panel.h"

#include <attnscope/variant_catalog.h>

#include "gui/compare_variants_editor.h"
#include "gui/engine_runner.h"
#include "gui/model_source.h"
#include "gui/random_projection_banner.h"
#include "gui/sample_model.h"
#include "gui/model_source_panel.h"

#include "views/coverage_editor.h"
#include "views/head_atlas.h"
#include "views/inspection_state.h"
#include "views/param_form.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QLabel>
#include <QStandardPaths>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnscope::app {

void MainWindow::buildModelSourceUi() {
    m_modelSource = new ModelSource(m_runner, this);
    m_sourcePanel = new ModelSourcePanel(this);
    m_inputs->addSourceWidget(m_sourcePanel);
    connect(m_sourcePanel, &ModelSourcePanel::openRequested, this, &MainWindow::openModelInteractive);
    connect(m_sourcePanel, &ModelSourcePanel::sourceChanged, this, &MainWindow::uiModelSourceChanged);
    connect(m_modelSource, &ModelSource::modelOpened, this, &MainWindow::uiModelOpened);
    connect(m_modelSource, &ModelSource::modelOpenFailed, this, &MainWindow::uiModelOpenFailed);
    connect(m_modelSource, &ModelSource::analysisProgress, this,
            [this](int permille, const QString& stage) { m_atlasView->setProgress(permille, stage); });
    connect(m_modelSource, &ModelSource::atlasReady, this, &MainWindow::uiShowAtlas);
    // A run that ends disables Esc (uiRunStateChanged); queued, this runs after that handler and
    // keeps Esc live while an analysis is still running.
    const auto keepEscapeForAnalysis = [this] {
        if (m_modelSource->isAnalyzing()) m_cancelAction->setEnabled(true);
    };
    connect(m_runner, &EngineRunner::runFinished, this, keepEscapeForAnalysis, Qt::QueuedConnection);
    connect(m_runner, &EngineRunner::jobFailed, this, keepEscapeForAnalysis, Qt::QueuedConnection);
    connect(m_modelSource, &ModelSource::analysisFailed, this, [this](const QString& message, int code) {
        m_atlasView->setBusy(false);
        m_cancelAction->setEnabled(m_runner->isRunning());
        const QString text =
            code == static_cast<int>(engine::ErrorCode::Cancelled)
                ? tr("Analysis cancelled.")
                : tr("Analysis failed (%1): %2")
                      .arg(QString::fromLatin1(engine::errorCodeName(static_cast<engine::ErrorCode>(code))), message);
        m_atlasView->setMessage(text);
        setStatusMessage(text, message);
        Q_EMIT atlasFailed(message, code);
    });
}

void MainWindow::buildAtlasTab() {
    m_atlasView = new views::HeadAtlasView(m_viewTabs);
    m_viewTabs->addTab(m_atlasView, tr("Atlas"));
    m_viewTabs->setTabToolTip(m_viewTabs->indexOf(m_atlasView),
                              tr("Every head of the opened model coloured by one metric, and what each efficient "
                                 "variant would keep of it; attention rollout across layers"));
    connect(m_atlasView, &views::HeadAtlasView::analyzeRequested, this, &MainWindow::analyzeModel);
    connect(m_atlasView, &views::HeadAtlasView::cancelRequested, m_modelSource, &ModelSource::cancelAnalysis);
    connect(m_atlasView, &views::HeadAtlasView::headSelected, this, &MainWindow::uiCompareAtlasHead);
}

void MainWindow::buildModelActions(QMenu* fileMenu) {
    QAction* open = fileMenu->addAction(tr("Open &Model…"), this, &MainWindow::openModelInteractive);
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
    open->setToolTip(tr("Open a model folder (config.json, model.safetensors, tokenizer files)"));
}

void MainWindow::uiApplyModelSource(engine::RunRequest& request) const {
    if (!m_sourcePanel || !m_sourcePanel->usesModel()) return;
    request.model = engine::ModelLayerSource{m_modelSource->folder().toStdString(), m_sourcePanel->layer()};
}

std::optional<QString> MainWindow::uiOpenModelPath(const QString& path) {
    // A folder, or a file that only makes sense inside a model folder, opens that folder.
    const QFileInfo info(path);
    const QString name = info.fileName();
    if (info.isDir()) {
        openModelFolder(info.absoluteFilePath());
        return QString();
    }
    if (name == QLatin1String("config.json") || name.endsWith(QLatin1String(".safetensors")) ||
        name.endsWith(QLatin1String(".safetensors.index.json"))) {
        openModelFolder(info.absolutePath());
        return QString();
    }
    return std::nullopt;
}

void MainWindow::openModelInteractive() {
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Model Folder"), m_modelSource->folder());
    if (!folder.isEmpty()) openModelFolder(folder);
}

void MainWindow::openModelFolder(const QString& folder) {
    setStatusMessage(tr("Opening the model %1…").arg(QDir(folder).dirName()));
    m_sourcePanel->openButton()->setEnabled(false);
    m_pendingModelFolder = folder;
    m_modelSource->open(folder);
}

void MainWindow::uiModelOpened(const engine::ModelInfo& info) {
    m_sourcePanel->openButton()->setEnabled(true);
    m_sourcePanel->setModel(info);
    m_modelVariantDefaults = info.variantDefaults;
    if (m_pickModelsVariant && !info.variantDefaults.empty()) {
        const int index = m_inputs->variantCombo()->findData(QString::fromStdString(info.variantDefaults.begin()->first));
        if (index >= 0) m_inputs->variantCombo()->setCurrentIndex(index);
    }
    m_pickModelsVariant = false;
    applyModelDefaults();
    if (m_pendingModelLayer >= 0)
        m_sourcePanel->setLayer(std::min<int>(m_pendingModelLayer, static_cast<int>(info.layers) - 1));
    m_pendingModelLayer = -1;
    m_atlasView->setAtlas(nullptr);
    const QString record = views::HeadAtlasView::trainingSummary(info);
    m_atlasView->setMessage(tr("%1 is open: press Analyze to describe its heads on the input text.%2")
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

void MainWindow::uiModelOpenFailed(const QString& folder, const QString& message, int code) {
    m_sourcePanel->openButton()->setEnabled(true);
    m_pendingModelLayer = -1;
    m_pickModelsVariant = false;
    const QString text =
        tr("Cannot open the model %1 (%2): %3")
            .arg(QDir(folder).dirName(),
                 QString::fromLatin1(engine::errorCodeName(static_cast<engine::ErrorCode>(code))), message);
    // The previous model (if any) stays the source: the refusal changed nothing.
    setStatusMessage(text, message);
    if (m_options.showErrorDialogs) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open the model"), text, QMessageBox::Ok, this);
        box->setTextFormat(Qt::PlainText);  // file and tensor names are untrusted (FORMATS.md §5)
        box->setInformativeText(
            tr("A model folder holds config.json, model.safetensors (or a sharded index) "
               "and tokenizer files. Pickled .bin/.pt checkpoints are refused: convert them "
               "to safetensors."));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    Q_EMIT modelOpenFailed(text);
}

void MainWindow::uiModelSourceChanged() {
    uiShowSourceControls(m_sourcePanel->usesModel());
    if (m_variantsKnown) uiStartRun(false);
}

void MainWindow::uiShowSourceControls(bool model) {
    // The model's own tokenizer and projections replace the window's.
    const std::string tokenizer = model && m_modelSource->model() ? m_modelSource->model()->tokenizer : std::string();
    m_inputs->showModelSource(model, QString::fromStdString(tokenizer));
    if (m_banner) m_banner->setRandomProjections(!model);
    uiUpdateTitle();
}

void MainWindow::useSampleModel() {
    QString error;
    const auto folder = extractSampleModel(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation), &error);
    if (!folder) {
        setStatusMessage(tr("Cannot prepare the sample model: %1").arg(error), error);
        return;
    }
    // Its own attention is the variant it gives defaults for (Transformer-XL's, with its L and M).
    m_pickModelsVariant = true;
    openModelFolder(*folder);
}

void MainWindow::analyzeModel() {
    if (!m_modelSource->model()) {
        const QString text =
            tr("Open a model first (File ▸ Open Model…): the atlas describes a trained model's heads.");
        m_atlasView->setMessage(text);
        setStatusMessage(text);
        return;
    }
    auto settings = m_atlasView->coverageEditor()->settingsForNextRun();
    if (!settings) {  // the editor marks the line and says why, under the field
        setStatusMessage(m_atlasView->coverageEditor()->problem());
        return;
    }
    engine::AtlasRequest request;
    request.text = m_inputs->text()->toPlainText().toStdString();
    request.settings = std::move(*settings);
    m_atlasView->setBusy(true);
    m_atlasView->setMessage(tr("Analysing %1…").arg(QDir(m_modelSource->folder()).dirName()));
    m_cancelAction->setEnabled(true);  // Esc cancels the analysis too (cancelRun)
    m_modelSource->analyze(std::move(request));
}

void MainWindow::uiShowAtlas(const std::shared_ptr<const engine::HeadAtlas>& atlas) {
    m_atlasView->setBusy(false);
    m_cancelAction->setEnabled(m_runner->isRunning());
    m_atlasView->setAtlas(atlas);
    if (m_sourcePanel->usesModel()) m_atlasView->setSelectedHead(m_sourcePanel->layer(), m_state->head());
    setStatusMessage(tr("Head atlas: %1 layers × %2 heads on %3 tokens in %4 s.")
                         .arg(atlas->layers)
                         .arg(atlas->heads)
                         .arg(atlas->n)
                         .arg(atlas->seconds, 0, 'f', 2));
    Q_EMIT atlasShown();
}

void MainWindow::uiCompareAtlasHead(int layer, int head) {
    const auto& atlas = m_atlasView->atlas();
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
    while (m_inputs->compareEditor()->rowCount() > 1) m_inputs->compareEditor()->removeRow(m_inputs->compareEditor()->rowCount() - 1);
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        const QString id = QString::fromStdString(chosen[i]->variantId);
        if (i == 0) {
            m_inputs->compareEditor()->combo(0)->setCurrentIndex(m_inputs->compareEditor()->combo(0)->findData(id));
        } else {
            m_inputs->compareEditor()->addRow(id);
        }
        m_inputs->compareEditor()->form(static_cast<int>(i))->setValues(chosen[i]->params);
    }
    m_state->setHead(head);
    m_atlasView->setSelectedHead(layer, head);
    if (currentView() != View::Compare) showView(View::Compare);
    uiStartRun(true);  // supersedes a run the tab switch may have started with the old rows
    setStatusMessage(tr("Layer %1, head %2: full beside %3 settings with the lowest output error.")
                         .arg(layer)
                         .arg(head)
                         .arg(chosen.size()));
}

}  // namespace attnscope::app
