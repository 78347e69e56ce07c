#pragma once
// The window's files: File ▸ Open Session / Save Session / Save As / Recent, files and text
// dropped on the window, and text files that are not UTF-8 (offered again with replacement
// characters). A file is judged by its content: a session is checked whole and applied, a text
// becomes the input, a model folder is the window's to open. What a session holds and how it is
// applied stay with the window (Host); this class moves files in and out.

#include <QObject>
#include <QString>

#include <functional>
#include <optional>

class QMenu;
class QMimeData;
class QWidget;

namespace attnscope::app {

class RecentFilesMenu;
struct SessionState;

class DocumentController : public QObject {
    Q_OBJECT
public:
    /// What the controller asks of the window.
    struct Host {
        /// Everything a session file holds, read from the widgets.
        std::function<SessionState()> captureSession;
        /// Checks and applies a session; the refusal's message, or empty.
        std::function<QString(const SessionState&)> applySession;
        /// What applying the last session could not restore (its picture), said after "Opened the
        /// session"; empty when all of it came back. Optional.
        std::function<QString()> takeSessionNotice;
        /// A result file (File ▸ Open Result): "" once its reading started; nullopt when `path`
        /// is not one. Tried before the model opener, to which every .safetensors is a model's.
        std::function<std::optional<QString>(const QString& path)> openResultPath;
        /// A model folder, config.json or .safetensors: "" once its opening started; nullopt
        /// when `path` is not a model's.
        std::function<std::optional<QString>(const QString& path)> openModelPath;
        /// An image file (judged by content): "" once it is the input, or the refusal; nullopt
        /// when `path` is not an image.
        std::function<std::optional<QString>(const QString& path)> openImagePath;
        /// `text` becomes the input, named `source`, with `title` in the window title; it runs.
        std::function<void(const QString& text, const QString& source, const QString& title)> useText;
        /// A session was opened or saved under this name: the window title names it.
        std::function<void(const QString& name)> nameSession;
        /// A status message and its details.
        std::function<void(const QString& text, const QString& details)> report;
    };

    /// `window` parents the dialogs (shown only with `dialogs`); `persistRecent` keeps File ▸
    /// Recent in QSettings.
    DocumentController(QWidget* window, Host host, bool persistRecent, bool dialogs);

    /// Open Session (Ctrl+O), Save Session (Ctrl+S), Save Session As (Ctrl+Shift+S), Recent.
    void addActions(QMenu* fileMenu);
    RecentFilesMenu* recentFiles() const { return m_recent; }

    /// Opens a session or a text file, judged by content; errors are also shown. Empty on success.
    QString openPath(const QString& path);
    /// Opens a file that is not UTF-8 as text, each byte that is not UTF-8 (and NUL) replaced by
    /// U+FFFD. Returns "" or the error shown.
    QString openTextWithReplacement(const QString& path);
    /// Saves the session to `path`, which becomes the current session file. Empty on success.
    QString saveSessionTo(const QString& path);
    /// The file Ctrl+S writes; empty until a session was opened or saved.
    QString sessionPath() const { return m_sessionPath; }
    /// A drop of files (the first local one opens) or text; true when it was ours.
    bool drop(const QMimeData* mime);
    /// Files and text dropped on the window open through drop(); on the text editor's
    /// `editorViewport` files open too (the editor would insert their URL as text).
    void acceptDrops(QWidget* editorViewport);

    void openSessionInteractive();
    void saveSession();
    void saveSessionAs();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void reportOpenError(const QString& message);
    /// Reports a file that is not UTF-8 text and (with dialogs) offers openTextWithReplacement.
    void offerReplacement(const QString& path, const QString& message);

    QWidget* m_window = nullptr;
    QWidget* m_editorViewport = nullptr;
    Host m_host;
    bool m_dialogs = true;
    bool m_persistRecent = false;
    RecentFilesMenu* m_recent = nullptr;
    QString m_sessionPath;
};

}  // namespace attnscope::app
