// MainWindow's session, recent-file, drag-and-drop and theme handling, kept apart from the
// window's layout and run logic (main_window.cpp). The file formats live in session.* and
// param_json.*; this file only moves values between them and the widgets.

#include "gui/main_window.h"
#include "gui/run_settings_panel.h"

#include <attnscope/tokenize.h>

#include "gui/compare_variants_editor.h"
#include "gui/engine_runner.h"
#include "gui/model_source.h"
#include "gui/model_source_panel.h"
#include "gui/palette.h"
#include "gui/recent_files_menu.h"
#include "gui/param_json.h"
#include "gui/session.h"

#include "views/compare_view.h"
#include "views/head_heatmap.h"
#include "views/heatmap_options.h"
#include "views/inspection_state.h"
#include "views/mask_view.h"
#include "views/param_form.h"

#include <QAction>
#include <QActionGroup>
#include <QComboBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSpinBox>
#include <QUrl>

#include <algorithm>

namespace attnscope::app {

namespace {

/// Where a file stops being UTF-8 text: "a NUL byte at byte offset 12" or "invalid UTF-8 at
/// byte offset 3 (0xFF)", as the command line reports it.
QString describeNonText(const QByteArray& bytes) {
    const std::string text(bytes.constData(), static_cast<std::size_t>(bytes.size()));
    const qsizetype nul = bytes.indexOf('\0');
    const std::int64_t invalid = engine::findInvalidUtf8(text);
    if (nul >= 0 && (invalid < 0 || nul < invalid))
        return QObject::tr("a NUL byte at byte offset %1").arg(nul);
    if (invalid < 0) return QObject::tr("it is not text");
    return QObject::tr("invalid UTF-8 at byte offset %1 (0x%2)")
        .arg(invalid)
        .arg(static_cast<unsigned char>(bytes.at(static_cast<qsizetype>(invalid))), 2, 16, QLatin1Char('0'));
}

const QStringList& viewNames() {
    // Indexed by MainWindow::View.
    static const QStringList names{QStringLiteral("heatmap"), QStringLiteral("mask"), QStringLiteral("compare"),
                                   QStringLiteral("diagnostics"), QStringLiteral("links"), QStringLiteral("cost")};
    return names;
}

const engine::VariantInfo* findInfo(const std::vector<engine::VariantInfo>& variants, const QString& id) {
    const auto it = std::find_if(variants.begin(), variants.end(),
                                 [&](const engine::VariantInfo& v) { return QString::fromStdString(v.id) == id; });
    return it == variants.end() ? nullptr : &*it;
}

}  // namespace

void MainWindow::buildSessionActions(QMenu* fileMenu) {
    QAction* open = fileMenu->addAction(tr("&Open Session…"), this, &MainWindow::openSessionInteractive);
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_O));
    open->setToolTip(tr("Open a session file, or a text file as input"));
    QAction* save = fileMenu->addAction(tr("&Save Session"), this, &MainWindow::saveSession);
    save->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_S));
    QAction* saveAs = fileMenu->addAction(tr("Save Session &As…"), this, &MainWindow::saveSessionAs);
    saveAs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    m_recentFiles = new RecentFilesMenu(fileMenu->addMenu(tr("&Recent")), m_options.persistRecentFiles, this);
    connect(m_recentFiles, &RecentFilesMenu::openRequested, this, [this](const QString& path) { openPath(path); });
    fileMenu->addSeparator();
}

void MainWindow::buildThemeActions(QMenu* viewMenu) {
    viewMenu->addSeparator();
    QMenu* themeMenu = viewMenu->addMenu(tr("&Theme"));
    auto* group = new QActionGroup(this);
    m_lightThemeAction = themeMenu->addAction(tr("&Light"), this, [this] { setTheme(QStringLiteral("light")); });
    m_darkThemeAction = themeMenu->addAction(tr("&Dark"), this, [this] { setTheme(QStringLiteral("dark")); });
    for (QAction* action : {m_lightThemeAction, m_darkThemeAction}) {
        action->setCheckable(true);
        group->addAction(action);
    }
    m_lightThemeAction->setChecked(true);
}

void MainWindow::uiRestoreHabits(const AppSettings& settings) {
    m_recentFiles->setPaths(settings.recentFiles);
    setAcceptDrops(true);
    // The editor would insert a dropped file's URL as text: files dropped on it open instead.
    m_inputs->text()->viewport()->installEventFilter(this);
    // NOTE: the light theme at start keeps the platform's own style; only a switch applies Fusion.
    if (settings.theme == QLatin1String("dark")) setTheme(settings.theme);
    // A loaded session's mask-view query is shown when the mask view takes the next result
    // (MainWindow::uiDeliverResult).
}

void MainWindow::setTheme(const QString& name) {
    const Theme theme = attnscope::app::themeFromName(name);
    m_theme = attnscope::app::themeName(theme);
    applyTheme(theme, this);
    if (m_lightThemeAction) m_lightThemeAction->setChecked(theme == Theme::Light);
    if (m_darkThemeAction) m_darkThemeAction->setChecked(theme == Theme::Dark);
}

QStringList MainWindow::recentFiles() const { return m_recentFiles->paths(); }

QMenu* MainWindow::recentMenu() const { return m_recentFiles->menu(); }

SessionState MainWindow::captureSession() const {
    SessionState s;
    s.text = m_inputs->text()->toPlainText();
    s.textSource = m_options.textSource;
    s.tokenizer = m_inputs->tokenizerCombo()->currentText();
    s.seed = m_inputs->seedSpin()->value();
    s.heads = m_inputs->headsSpin()->value();
    s.headDim = m_inputs->headDimSpin()->value();
    const QString variant = m_inputs->variantCombo()->currentData().toString();
    s.variantId = variant.isEmpty() ? m_preferredVariant : variant;
    s.params = paramsToJson(m_inputs->paramForm()->values());
    for (int row = 0; row < m_inputs->compareEditor()->rowCount(); ++row) {
        const QString id = m_inputs->compareEditor()->combo(row)->currentData().toString();
        if (!id.isEmpty()) s.compare.append({id, paramsToJson(m_inputs->compareEditor()->form(row)->values())});
    }
    s.view = viewNames().value(static_cast<int>(currentView()), QStringLiteral("heatmap"));
    const views::HeatmapOptions heatmap = m_heatmap->options();
    s.colormap = heatmap.colormap;
    s.scale = views::colorScaleName(heatmap.scale);
    s.pooling = views::poolModeName(heatmap.pooling);
    s.maskWeights = m_maskView->showWeights();
    s.layer = m_state->layer();
    s.head = m_state->head();
    s.query = m_pendingQuery >= 0 ? m_pendingQuery : m_maskView->panelQuery();
    if (m_sourcePanel->usesModel()) {
        s.modelFolder = m_modelSource->folder();
        s.modelLayer = m_sourcePanel->layer();
    } else if (m_pendingModelLayer >= 0 && m_modelSource->isOpening()) {
        s.modelFolder = m_pendingModelFolder;  // a session's or --model's folder still opening
        s.modelLayer = m_pendingModelLayer;
    }
    return s;
}

QString MainWindow::applySession(const SessionState& session) {
    // Everything is checked before the first widget changes, so a refused session leaves the
    // text and the settings as they were.
    if (!m_variantsKnown) return tr("The engine is still starting; open the session again in a moment.");
    const engine::VariantInfo* info = findInfo(m_variants, session.variantId);
    if (!info)
        return tr("The session uses the variant \"%1\", which this AttnScope does not have. Nothing was changed.")
            .arg(session.variantId);
    engine::ParamValues params;
    QString error;
    if (!paramsFromJson(*info, session.params, QStringLiteral("variant.params"), &params, &error))
        return tr("The session's parameters do not fit: %1. Nothing was changed.").arg(error);
    std::vector<std::pair<const engine::VariantInfo*, engine::ParamValues>> compared;
    if (session.compare.size() > CompareVariantsEditor::kMaxRows)
        return tr("The session compares %1 variants; at most %2 fit. Nothing was changed.")
            .arg(session.compare.size())
            .arg(CompareVariantsEditor::kMaxRows);
    for (qsizetype row = 0; row < session.compare.size(); ++row) {
        const SessionVariant& v = session.compare[row];
        const engine::VariantInfo* compareInfo = findInfo(m_variants, v.id);
        if (!compareInfo)
            return tr("The session compares with the variant \"%1\", which this AttnScope does not have. Nothing was changed.")
                .arg(v.id);
        engine::ParamValues values;
        if (!paramsFromJson(*compareInfo, v.params, QStringLiteral("compare[%1].params").arg(row), &values, &error))
            return tr("The session's parameters do not fit: %1. Nothing was changed.").arg(error);
        compared.emplace_back(compareInfo, std::move(values));
    }
    const int tokenizer = m_inputs->tokenizerCombo()->findText(session.tokenizer);
    if (tokenizer < 0) return tr("The session's tokenizer \"%1\" is unknown. Nothing was changed.").arg(session.tokenizer);

    m_inputs->text()->setPlainText(session.text);
    m_options.textSource = session.textSource;
    m_inputs->tokenizerCombo()->setCurrentIndex(tokenizer);
    m_inputs->seedSpin()->setValue(session.seed);
    m_inputs->headsSpin()->setValue(session.heads);
    m_inputs->headDimSpin()->setValue(session.headDim);
    m_preferredVariant = session.variantId;
    m_inputs->variantCombo()->setCurrentIndex(m_inputs->variantCombo()->findData(session.variantId));
    m_inputs->paramForm()->setVariant(*info);  // schema defaults first, so omitted parameters are not left over
    m_inputs->paramForm()->setValues(params);
    // Row 0 always exists; extra rows are added or removed to match the session.
    const int rows = std::max(1, static_cast<int>(compared.size()));
    while (m_inputs->compareEditor()->rowCount() > rows) m_inputs->compareEditor()->removeRow(m_inputs->compareEditor()->rowCount() - 1);
    for (std::size_t row = 0; row < compared.size(); ++row) {
        const QString id = QString::fromStdString(compared[row].first->id);
        if (static_cast<int>(row) >= m_inputs->compareEditor()->rowCount()) m_inputs->compareEditor()->addRow(id);
        QComboBox* combo = m_inputs->compareEditor()->combo(static_cast<int>(row));
        combo->setCurrentIndex(combo->findData(id));
        views::ParamForm* form = m_inputs->compareEditor()->form(static_cast<int>(row));
        form->setVariant(*compared[row].first);
        form->setValues(compared[row].second);
    }
    views::HeatmapOptions options;
    options.colormap = session.colormap;
    options.scale = views::colorScaleFromName(session.scale);
    options.pooling = views::poolModeFromName(session.pooling);
    m_heatmap->setOptions(options);
    for (views::HeadHeatmap* pane : m_compareView->findChildren<views::HeadHeatmap*>()) pane->setOptions(options);
    m_maskView->setShowWeights(session.maskWeights);
    m_state->setLayer(session.layer);
    m_state->setHead(session.head);  // clamped to the result's heads when it arrives
    m_maskView->showQuery(-1);
    m_pendingQuery = session.query;
    // The Q/K/V source: the session's model layer (opened first when it is not the open model), or
    // random projections. Switching the source quietly: the session runs once, below.
    const bool modelOpen = m_modelSource->model().has_value() && m_modelSource->folder() == session.modelFolder;
    {
        const QSignalBlocker block(m_sourcePanel);
        if (session.modelFolder.isEmpty()) {
            m_sourcePanel->setKind(ModelSourcePanel::Kind::RandomProjections);
        } else if (modelOpen) {
            m_sourcePanel->setKind(ModelSourcePanel::Kind::ModelLayer);
            m_sourcePanel->setLayer(session.modelLayer);
        }
    }
    const bool model = m_sourcePanel->usesModel();
    uiShowSourceControls(model);
    if (!session.modelFolder.isEmpty() && !modelOpen) {
        // Opening runs the layer when the model is ready (uiModelOpened); nothing runs before.
        m_pendingModelLayer = session.modelLayer;
        openModelFolder(session.modelFolder);
        showView(static_cast<View>(std::max<qsizetype>(0, viewNames().indexOf(session.view))));
        return {};
    }
    const quint64 before = m_currentJob;
    showView(static_cast<View>(std::max<qsizetype>(0, viewNames().indexOf(session.view))));
    if (m_currentJob == before) uiStartRun(false);  // the Compare and Diagnostics tabs start their own
    return {};
}

void MainWindow::uiReportOpenError(const QString& message) {
    setStatusMessage(message, message);
    if (!m_options.showErrorDialogs) return;
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open"), message, QMessageBox::Ok, this);
    box->setTextFormat(Qt::PlainText);  // file names and JSON errors are shown as data
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

QString MainWindow::openPath(const QString& path) {
    if (const auto model = uiOpenModelPath(path)) return *model;  // model folders: main_window_model.cpp
    QString error;
    const auto bytes = Session::readFile(path, &error);
    if (!bytes) {
        uiReportOpenError(error);
        return error;
    }
    const QString name = QFileInfo(path).fileName();
    switch (Session::classify(*bytes)) {
    case FileKind::Binary:
        error = tr("%1 is neither text nor an AttnScope session: %2. Nothing was changed.").arg(name, describeNonText(*bytes));
        uiOfferReplacement(path, error);
        return error;
    case FileKind::Session: {
        const auto session = Session::parse(*bytes, name, &error);
        if (session) error = applySession(*session);
        if (!error.isEmpty()) {
            uiReportOpenError(error);
            return error;
        }
        m_sessionPath = QFileInfo(path).absoluteFilePath();
        uiSetSourceTitle(name);
        m_recentFiles->remember(path);
        setStatusMessage(tr("Opened the session %1.").arg(name));
        return {};
    }
    case FileKind::Text:
        m_inputs->text()->setPlainText(QString::fromUtf8(*bytes));
        m_options.textSource = name;
        uiSetSourceTitle(name);
        m_recentFiles->remember(path);
        uiStartRun(true);
        return {};
    }
    return {};
}

QString MainWindow::openTextWithReplacement(const QString& path) {
    QString error;
    const auto bytes = Session::readFile(path, &error);
    if (!bytes) {
        uiReportOpenError(error);
        return error;
    }
    // Invalid sequences become U+FFFD as the decoder reads them; NUL bytes too (an editor shows
    // nothing for them).
    const qsizetype already = bytes->count(QByteArrayLiteral("\xEF\xBF\xBD"));  // U+FFFD in the file itself
    QString text = QString::fromUtf8(*bytes);
    text.replace(QChar(0), QChar(0xFFFD));
    const qsizetype replaced = text.count(QChar(0xFFFD)) - already;
    const QString name = QFileInfo(path).fileName();
    m_inputs->text()->setPlainText(text);
    m_options.textSource = name;
    uiSetSourceTitle(tr("%1 (repaired)").arg(name));
    m_recentFiles->remember(path);
    uiStartRun(true);
    // (after starting the run, whose "Running…" would hide it)
    const QString count = replaced == 1 ? tr("1 replacement character") : tr("%1 replacement characters").arg(replaced);
    setStatusMessage(tr("Opened %1 with %2 (U+FFFD) for bytes that were not UTF-8.").arg(name, count));
    return {};
}

void MainWindow::uiOfferReplacement(const QString& path, const QString& message) {
    setStatusMessage(message, message);
    if (!m_options.showErrorDialogs) return;
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Not UTF-8 text"), message, QMessageBox::Cancel, this);
    box->setTextFormat(Qt::PlainText);
    box->setInformativeText(tr("It can be opened with a replacement character (U+FFFD) for every byte that is not UTF-8."));
    QPushButton* replace = box->addButton(tr("Open with Replacement Characters"), QMessageBox::AcceptRole);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [this, path, replace](QAbstractButton* button) {
        if (button == replace) openTextWithReplacement(path);
    });
    box->open();
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

QString MainWindow::saveSessionTo(const QString& path) {
    const QString error = Session::write(path, captureSession());
    if (!error.isEmpty()) {
        uiReportOpenError(error);
        return error;
    }
    m_sessionPath = QFileInfo(path).absoluteFilePath();
    uiSetSourceTitle(QFileInfo(path).fileName());
    m_recentFiles->remember(path);
    setStatusMessage(tr("Saved the session to %1.").arg(QDir::toNativeSeparators(path)));
    return {};
}

void MainWindow::openSessionInteractive() {
    const QString folder = m_sessionPath.isEmpty() ? QString() : QFileInfo(m_sessionPath).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Session"), folder, tr("AttnScope sessions (*.json);;Text files (*.txt *.md);;All files (*)"));
    if (!path.isEmpty()) openPath(path);
}

void MainWindow::saveSession() {
    if (m_sessionPath.isEmpty()) {
        saveSessionAs();
        return;
    }
    saveSessionTo(m_sessionPath);
}

void MainWindow::saveSessionAs() {
    const QString suggested = m_sessionPath.isEmpty() ? QDir::home().filePath(QStringLiteral("session.attnscope.json")) : m_sessionPath;
    QString path = QFileDialog::getSaveFileName(this, tr("Save Session"), suggested, tr("AttnScope sessions (*.json)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    saveSessionTo(path);
}

bool MainWindow::uiDrop(const QMimeData* mime) {
    if (mime->hasUrls()) {
        for (const QUrl& url : mime->urls()) {
            if (url.isLocalFile()) {
                openPath(url.toLocalFile());  // the first local file; reports its own errors
                return true;
            }
        }
        uiReportOpenError(tr("Only local files can be opened."));
        return false;
    }
    if (mime->hasText()) {
        m_inputs->text()->setPlainText(mime->text());
        m_options.textSource = tr("dropped text");
        uiSetSourceTitle(m_options.textSource);
        uiStartRun(true);
        return true;
    }
    return false;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls() || event->mimeData()->hasText()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    if (uiDrop(event->mimeData())) event->acceptProposedAction();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_inputs->text()->viewport()) {
        const QEvent::Type type = event->type();
        if (type == QEvent::DragEnter || type == QEvent::DragMove || type == QEvent::Drop) {
            auto* drag = static_cast<QDropEvent*>(event);  // QDragEnterEvent and QDragMoveEvent derive from it
            if (drag->mimeData()->hasUrls()) {
                if (type == QEvent::Drop) uiDrop(drag->mimeData());
                drag->acceptProposedAction();
                return true;
            }
        }
    }
    return QMainWindow::eventFilter(watched, event);
}

}  // namespace attnscope::app
