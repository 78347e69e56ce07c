// MainWindow's documents: its sessions (the column's, the views' and its own parts, applied only
// after resolveSession accepted them), the window title, and the DocumentController that opens,
// saves and takes dropped files; the file formats live in session.* and param_json.*.

#include "gui/window/main_window.h"

#include "common/image_file.h"

#include "gui/panels/compare_variants_editor.h"
#include "gui/controllers/document_controller.h"
#include "gui/controllers/result_file_controller.h"
#include "gui/controllers/model_controller.h"
#include "gui/engine/model_source.h"
#include "gui/panels/model_source_panel.h"
#include "gui/window/recent_files_menu.h"
#include "gui/panels/run_settings_panel.h"
#include "gui/settings/session_resolve.h"
#include "gui/window/theme_menu.h"

#include <QDir>
#include <QFileInfo>
#include <QPlainTextEdit>

#include <utility>

namespace attnscope::app {

void MainWindow::uiRestoreHabits(const AppSettings& settings) {
    m_documents->recentFiles()->setPaths(settings.recentFiles);
    m_documents->acceptDrops(m_inputs->text()->viewport());
    // NOTE: the light theme at start keeps the platform's own style; only a switch applies Fusion.
    if (settings.theme == QLatin1String("dark")) setTheme(settings.theme);
}

void MainWindow::setTheme(const QString& name) { m_themes->setTheme(name); }

QString MainWindow::themeName() const { return m_themes->themeName(); }

void MainWindow::buildDocuments() {
    m_resultFiles = new ResultFileController(this);
    connect(m_resultFiles, &ResultFileController::opening, this, [this](const QString& text) { setStatusMessage(text); });
    connect(m_resultFiles, &ResultFileController::openFailed, this, [this](const QString& text) { setStatusMessage(text, text); });
    connect(m_resultFiles, &ResultFileController::opened, this, &MainWindow::uiShowOpenedResult);
    DocumentController::Host host;
    host.captureSession = [this] { return captureSession(); };
    host.applySession = [this](const SessionState& session) { return applySession(session); };
    host.takeSessionNotice = [this] { return std::exchange(m_sessionNotice, QString()); };
    host.openResultPath = [this](const QString& path) { return m_resultFiles->openPath(path); };
    host.openModelPath = [this](const QString& path) { return m_models->openPath(path); };
    host.openImagePath = [this](const QString& path) -> std::optional<QString> {
        if (!looksLikeImage(path)) return std::nullopt;
        return openImage(path);
    };
    host.useText = [this](const QString& text, const QString& source, const QString& title) {
        m_inputs->text()->setPlainText(text);
        if (m_inputs->imageIsInput()) m_inputs->useText();  // an opened text is the input, not the picture
        m_options.textSource = source;
        uiSetSourceTitle(title);
        uiStartRun(true);
    };
    host.nameSession = [this](const QString& name) { uiSetSourceTitle(name); };
    host.report = [this](const QString& text, const QString& details) { setStatusMessage(text, details); };
    m_documents = new DocumentController(this, std::move(host), m_options.persistRecentFiles, m_options.showErrorDialogs);
}

QString MainWindow::openPath(const QString& path) { return m_documents->openPath(path); }
QString MainWindow::openTextWithReplacement(const QString& path) { return m_documents->openTextWithReplacement(path); }
QString MainWindow::saveSessionTo(const QString& path) { return m_documents->saveSessionTo(path); }
QString MainWindow::sessionPath() const { return m_documents->sessionPath(); }
QStringList MainWindow::recentFiles() const { return m_documents->recentFiles()->paths(); }
QMenu* MainWindow::recentMenu() const { return m_documents->recentFiles()->menu(); }

SessionState MainWindow::captureSession() const {
    SessionState s;
    m_inputs->captureInto(s);
    s.textSource = m_options.textSource;
    m_views->captureInto(s);
    if (const auto source = m_models->sessionSource()) {  // (or a session's or --model's folder still opening)
        s.modelFolder = source->first;
        s.modelLayer = source->second;
    }
    return s;
}

QString MainWindow::applySession(const SessionState& session) {
    // Everything is checked before the first widget changes, so a refused session leaves the
    // text and the settings as they were.
    if (!m_variantsKnown) return tr("The engine is still starting; open the session again in a moment.");
    QString refusal;
    const std::optional<ResolvedSession> resolved =
        resolveSession(session, m_inputs->variants(), CompareVariantsEditor::kMaxRows, &refusal);
    if (!resolved) return refusal;
    if (QString refused = m_inputs->applySession(session, *resolved); !refused.isEmpty()) return refused;
    m_options.textSource = session.textSource;
    applySessionImage(session);
    m_views->applySession(session);
    // The Q/K/V source: the session's model layer (opened first when it is not the open model), or
    // random projections.
    const bool opening = m_models->takeSessionSource(session.modelFolder, session.modelLayer, !resolved->ownAttention);
    uiShowSourceControls(m_sourcePanel->usesModel());
    if (opening) {  // (the layer runs when the model is ready: uiModelOpened)
        showView(viewTabNamed(session.view));
        return {};
    }
    const quint64 before = m_runs->currentJob();
    showView(viewTabNamed(session.view));
    if (m_runs->currentJob() == before) uiStartRun(false);  // the Compare and Diagnostics tabs start their own
    return {};
}

void MainWindow::applySessionImage(const SessionState& session) {
    m_sessionNotice.clear();
    if (session.imagePath.isEmpty()) {
        if (m_inputs->imageIsInput()) m_inputs->useText();
        return;
    }
    auto picture = readImageFile(session.imagePath);
    if (!picture) {
        if (m_inputs->imageIsInput()) m_inputs->useText();
        m_sessionNotice = tr("Its picture could not be read (%1): the text is the input.")
                              .arg(QString::fromStdString(picture.error().message));
        return;
    }
    useImage(picture.value(), QFileInfo(session.imagePath).fileName(), session.imagePath);
    m_inputs->applyImageSettings(session);
    m_options.textSource = session.textSource;
}

void MainWindow::uiSetSourceTitle(const QString& name) {
    m_titleSource = name;
    m_titleText = m_inputs->text()->toPlainText();
    uiUpdateTitle();
}

void MainWindow::uiUpdateTitle() {
    if (m_titleSource.isEmpty()) return;
    // once the text is not what came from the source, the title says so instead of naming it alone
    const bool edited = m_inputs->text()->toPlainText() != m_titleText;
    QString title = edited ? tr("AttnScope — %1 (edited)").arg(m_titleSource) : tr("AttnScope — %1").arg(m_titleSource);
    if (m_sourcePanel && m_sourcePanel->usesModel() && m_modelSource)
        title += tr(" · model %1").arg(QDir(m_modelSource->folder()).dirName());
    setWindowTitle(title);
}

}  // namespace attnscope::app
