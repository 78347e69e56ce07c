#include "gui/controllers/document_controller.h"

#include "gui/window/recent_files_menu.h"
#include "gui/settings/session.h"

#include <attnscope/tokenize.h>

#include <QAction>
#include <QDir>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QUrl>

#include <algorithm>
#include <utility>

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

// A binary file (a picture, an archive, a program): more than a tenth of its first 8 KB are NUL or
// control bytes other than tab, line feed, form feed and carriage return. Text in another encoding
// (Latin-1) has few: it is offered with replacement characters, a binary file only refused.
bool looksBinary(const QByteArray& bytes) {
    const qsizetype head = std::min<qsizetype>(bytes.size(), 8192);
    qsizetype control = 0;
    for (qsizetype i = 0; i < head; ++i) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\f' && c != '\r') || c == 0x7F) ++control;
    }
    return control * 10 > head;
}

}  // namespace

DocumentController::DocumentController(QWidget* window, Host host, bool persistRecent, bool dialogs)
    : QObject(window), m_window(window), m_host(std::move(host)), m_dialogs(dialogs), m_persistRecent(persistRecent) {}

void DocumentController::addActions(QMenu* fileMenu) {
    QAction* open = fileMenu->addAction(tr("&Open Session…"), this, &DocumentController::openSessionInteractive);
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_O));
    open->setToolTip(tr("Open a session file, or a text file as input"));
    QAction* save = fileMenu->addAction(tr("&Save Session"), this, &DocumentController::saveSession);
    save->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_S));
    QAction* saveAs = fileMenu->addAction(tr("Save Session &As…"), this, &DocumentController::saveSessionAs);
    saveAs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    m_recent = new RecentFilesMenu(fileMenu->addMenu(tr("&Recent")), m_persistRecent, this);
    connect(m_recent, &RecentFilesMenu::openRequested, this, [this](const QString& path) { openPath(path); });
    fileMenu->addSeparator();
}

void DocumentController::reportOpenError(const QString& message) {
    m_host.report(message, message);
    if (!m_dialogs) return;
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open"), message, QMessageBox::Ok, m_window);
    box->setTextFormat(Qt::PlainText);  // file names and JSON errors are shown as data
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

QString DocumentController::openPath(const QString& path) {
    if (m_host.openResultPath)
        if (const auto result = m_host.openResultPath(path)) return *result;
    if (const auto model = m_host.openModelPath(path)) return *model;
    if (m_host.openImagePath)
        if (const auto image = m_host.openImagePath(path)) {
            if (image->isEmpty()) m_recent->remember(path);
            return *image;
        }
    QString error;
    const auto bytes = Session::readFile(path, &error);
    if (!bytes) {
        reportOpenError(error);
        return error;
    }
    const QString name = QFileInfo(path).fileName();
    switch (Session::classify(*bytes)) {
    case FileKind::Binary:
        error = tr("%1 is neither text nor an AttnScope session: %2. Nothing was changed.").arg(name, describeNonText(*bytes));
        if (looksBinary(*bytes)) reportOpenError(error);
        else offerReplacement(path, error);
        return error;
    case FileKind::Session: {
        const auto session = Session::parse(*bytes, name, &error);
        if (session) error = m_host.applySession(*session);
        if (!error.isEmpty()) {
            reportOpenError(error);
            return error;
        }
        m_sessionPath = QFileInfo(path).absoluteFilePath();
        m_host.nameSession(name);
        m_recent->remember(path);
        const QString notice = m_host.takeSessionNotice ? m_host.takeSessionNotice() : QString();
        m_host.report(tr("Opened the session %1.").arg(name) + (notice.isEmpty() ? QString() : QLatin1Char(' ') + notice), notice);
        return {};
    }
    case FileKind::Text:
        m_recent->remember(path);
        m_host.useText(QString::fromUtf8(*bytes), name, name);
        return {};
    }
    return {};
}

QString DocumentController::openTextWithReplacement(const QString& path) {
    QString error;
    const auto bytes = Session::readFile(path, &error);
    if (!bytes) {
        reportOpenError(error);
        return error;
    }
    // Invalid sequences become U+FFFD as the decoder reads them; NUL bytes too (an editor shows
    // nothing for them).
    const qsizetype already = bytes->count(QByteArrayLiteral("\xEF\xBF\xBD"));  // U+FFFD in the file itself
    QString text = QString::fromUtf8(*bytes);
    text.replace(QChar(0), QChar(0xFFFD));
    const qsizetype replaced = text.count(QChar(0xFFFD)) - already;
    const QString name = QFileInfo(path).fileName();
    m_recent->remember(path);
    m_host.useText(text, name, tr("%1 (repaired)").arg(name));
    // (after starting the run, whose "Running…" would hide it)
    const QString count = replaced == 1 ? tr("1 replacement character") : tr("%1 replacement characters").arg(replaced);
    m_host.report(tr("Opened %1 with %2 (U+FFFD) for bytes that were not UTF-8.").arg(name, count), {});
    return {};
}

void DocumentController::offerReplacement(const QString& path, const QString& message) {
    m_host.report(message, message);
    if (!m_dialogs) return;
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Not UTF-8 text"), message, QMessageBox::Cancel, m_window);
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

QString DocumentController::saveSessionTo(const QString& path) {
    const QString error = Session::write(path, m_host.captureSession());
    if (!error.isEmpty()) {
        reportOpenError(error);
        return error;
    }
    m_sessionPath = QFileInfo(path).absoluteFilePath();
    m_host.nameSession(QFileInfo(path).fileName());
    m_recent->remember(path);
    m_host.report(tr("Saved the session to %1.").arg(QDir::toNativeSeparators(path)), {});
    return {};
}

void DocumentController::openSessionInteractive() {
    const QString folder = m_sessionPath.isEmpty() ? QString() : QFileInfo(m_sessionPath).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        m_window, tr("Open Session"), folder, tr("AttnScope sessions (*.json);;Text files (*.txt *.md);;All files (*)"));
    if (!path.isEmpty()) openPath(path);
}

void DocumentController::saveSession() {
    if (m_sessionPath.isEmpty()) {
        saveSessionAs();
        return;
    }
    saveSessionTo(m_sessionPath);
}

void DocumentController::saveSessionAs() {
    const QString suggested = m_sessionPath.isEmpty() ? QDir::home().filePath(QStringLiteral("session.attnscope.json")) : m_sessionPath;
    QString path = QFileDialog::getSaveFileName(m_window, tr("Save Session"), suggested, tr("AttnScope sessions (*.json)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    saveSessionTo(path);
}

bool DocumentController::drop(const QMimeData* mime) {
    if (mime->hasUrls()) {
        for (const QUrl& url : mime->urls()) {
            if (url.isLocalFile()) {
                openPath(url.toLocalFile());  // the first local file; reports its own errors
                return true;
            }
        }
        reportOpenError(tr("Only local files can be opened."));
        return false;
    }
    if (mime->hasText()) {
        const QString source = tr("dropped text");
        m_host.useText(mime->text(), source, source);
        return true;
    }
    return false;
}

void DocumentController::acceptDrops(QWidget* editorViewport) {
    m_window->setAcceptDrops(true);
    m_window->installEventFilter(this);
    m_editorViewport = editorViewport;
    m_editorViewport->installEventFilter(this);
}

bool DocumentController::eventFilter(QObject* watched, QEvent* event) {
    const QEvent::Type type = event->type();
    if (type != QEvent::DragEnter && type != QEvent::DragMove && type != QEvent::Drop) return false;
    if (watched != m_window && watched != m_editorViewport) return false;
    auto* drag = static_cast<QDropEvent*>(event);  // QDragEnterEvent and QDragMoveEvent derive from it
    const QMimeData* mime = drag->mimeData();
    // The editor takes dropped text itself; the window takes files and text.
    const bool ours = mime->hasUrls() || (watched == m_window && mime->hasText());
    if (!ours) return false;
    // On the editor a dropped file is never inserted as its URL, even when it cannot be opened
    // (drop() has said why); the window lets a drop it did not take go on.
    if (type == QEvent::Drop && !drop(mime) && watched == m_window) return false;
    drag->acceptProposedAction();
    return true;
}

}  // namespace attnscope::app
