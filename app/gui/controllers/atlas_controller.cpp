#include "gui/controllers/atlas_controller.h"

#include "common/run_plan.h"
#include "gui/panels/compare_variants_editor.h"
#include "gui/panels/image_input_panel.h"
#include "gui/controllers/model_controller.h"
#include "gui/engine/model_source.h"
#include "gui/panels/model_source_panel.h"
#include "gui/panels/run_settings_panel.h"

#include "views/atlas/coverage_editor.h"
#include "views/atlas/head_atlas.h"
#include "views/data/inspection_state.h"

#include <attnscope/variant_catalog.h>

#include <QComboBox>
#include <QDir>
#include <QPlainTextEdit>

#include <algorithm>

namespace attnscope::app {

AtlasController::AtlasController(views::HeadAtlasView* view, ModelController* models, RunSettingsPanel* inputs,
                                 views::InspectionState* state, QObject* parent)
    : QObject(parent), m_view(view), m_models(models), m_inputs(inputs), m_state(state) {
    ModelSource* source = m_models->source();
    connect(m_view, &views::HeadAtlasView::analyzeRequested, this, &AtlasController::analyze);
    connect(m_view, &views::HeadAtlasView::cancelRequested, source, &ModelSource::cancelAnalysis);
    connect(m_view, &views::HeadAtlasView::headSelected, this, &AtlasController::compareHead);
    connect(source, &ModelSource::analysisProgress, m_view, &views::HeadAtlasView::setProgress);
    connect(source, &ModelSource::atlasReady, this, &AtlasController::showAtlas);
    connect(source, &ModelSource::analysisFailed, this, &AtlasController::showFailure);
}

QString AtlasController::modelName() const { return QDir(m_models->source()->folder()).dirName(); }

void AtlasController::modelOpened(const QString& trainingSummary) {
    m_view->setAtlas(nullptr);
    m_view->setMessage(tr("%1 is open: press Analyze to describe its heads on the input text.%2")
                           .arg(modelName(), trainingSummary.isEmpty() ? QString() : QLatin1Char(' ') + trainingSummary));
}

void AtlasController::analyze() {
    if (!m_models->source()->model()) {
        const QString text = tr("Open a model first (File ▸ Open Model…): the atlas describes a trained model's heads.");
        m_view->setMessage(text);
        Q_EMIT report(text);
        return;
    }
    auto settings = m_view->coverageEditor()->settingsForNextRun();
    if (!settings) {  // the editor marks the line and says why, under the field
        Q_EMIT report(m_view->coverageEditor()->problem());
        return;
    }
    engine::AtlasRequest request;
    request.text = m_inputs->text()->toPlainText().toStdString();
    // A vision model reads the picture; its flow (a max-flow problem per patch) is left to the CLI.
    if (m_inputs->imageIsInput()) request.image = m_inputs->imageInput()->spec();
    request.imageOptions.flow = false;
    request.settings = std::move(*settings);
    m_view->setBusy(true);
    m_view->setMessage(tr("Analysing %1…").arg(modelName()));
    m_models->source()->analyze(std::move(request));
    Q_EMIT busyChanged();
}

void AtlasController::showAtlas(const std::shared_ptr<const engine::HeadAtlas>& atlas) {
    m_view->setBusy(false);
    Q_EMIT busyChanged();
    m_view->setAtlas(atlas);
    if (m_models->usesModel()) m_view->setSelectedHead(m_models->panel()->layer(), m_state->head());
    Q_EMIT report(tr("Head atlas: %1 layers × %2 heads on %3 tokens in %4 s.")
                      .arg(atlas->layers)
                      .arg(atlas->heads)
                      .arg(atlas->n)
                      .arg(atlas->seconds, 0, 'f', 2));
    Q_EMIT atlasShown();
}

void AtlasController::showFailure(const QString& message, int code) {
    m_view->setBusy(false);
    Q_EMIT busyChanged();
    const QString text = code == static_cast<int>(engine::ErrorCode::Cancelled)
                             ? tr("Analysis cancelled.")
                             : tr("Analysis failed (%1): %2")
                                   .arg(QString::fromLatin1(engine::errorCodeName(static_cast<engine::ErrorCode>(code))), message);
    m_view->setMessage(text);
    Q_EMIT report(text, message);
    Q_EMIT atlasFailed(message, code);
}

void AtlasController::compareHead(int layer, int head) {
    const auto& atlas = m_view->atlas();
    if (!atlas || !m_models->source()->model()) return;
    // The settings that replace this head best (lowest output error), so the comparison shows
    // what the atlas suggests; settings that do not apply at this n are left out.
    const std::vector<const engine::CoverageSetting*> chosen =
        bestCoverageSettings(*atlas, layer, head, CompareVariantsEditor::kMaxRows);
    if (chosen.empty()) {
        Q_EMIT report(tr("No coverage setting applies to layer %1, head %2 at this length.").arg(layer).arg(head));
        return;
    }
    // The layer's own attention is the reference pane (what the atlas measured against); the rows
    // beside it take the model's causality (MainWindow::applySourceSettings), as the atlas ran them.
    ModelSourcePanel* panel = m_models->panel();
    panel->setKind(ModelSourcePanel::Kind::ModelLayer);  // (offers the own attention)
    {
        const QSignalBlocker block(panel);  // one run (compareRequested), not one per control
        panel->setLayer(layer);
    }
    if (m_inputs->ownAttentionOffered()) {
        m_inputs->chooseOwnAttention();
    } else {  // captured attention: `full` on its q, k (the file's weights are its own)
        QComboBox* variant = m_inputs->variantCombo();
        variant->setCurrentIndex(std::max(0, variant->findData(QString::fromStdString(engine::exactReference().id))));
    }
    std::vector<engine::VariantRequest> rows;
    for (const engine::CoverageSetting* setting : chosen) rows.push_back({setting->variantId, setting->params});
    m_inputs->compareEditor()->setRows(rows);
    m_state->setHead(head);
    m_view->setSelectedHead(layer, head);
    Q_EMIT compareRequested(layer, head, static_cast<int>(chosen.size()));
}

}  // namespace attnscope::app
