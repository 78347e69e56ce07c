#pragma once
// File ▸ Open Result…: a result file written by `attnscope-cli run` (or File ▸ Export Data) shown
// in the window as a finished run. The file is read on a thread of its own (a million-token
// result's q and k are 4 GiB, scanned before any weight is recomputed from them) while the window
// stays live; its tensors are read in place from the mapped file, not copied.

#include <attnscope/types.h>

#include <QObject>
#include <QString>

#include <memory>
#include <optional>

class QMenu;
class QThread;
class QWidget;

namespace attnscope::app {

class ResultFileController : public QObject {
    Q_OBJECT
public:
    /// `window` parents the file dialog.
    explicit ResultFileController(QWidget* window);
    ~ResultFileController() override;

    /// File ▸ Open Result… (Ctrl+Shift+R).
    void addAction(QMenu* fileMenu);
    /// Opens `path` when it is a result file: "" once its reading started; nullopt when it is not
    /// one (the caller tries it as something else).
    std::optional<QString> openPath(const QString& path);
    /// Reads `path` on the reading thread; opened() or openFailed() follows. A second call while a
    /// file is being read is refused with openFailed().
    void open(const QString& path);
    bool isOpening() const { return m_reader != nullptr; }

    void openInteractive();

Q_SIGNALS:
    void opening(const QString& message);
    /// The file's result, and a sentence saying what it is.
    void opened(std::shared_ptr<const attnscope::engine::RunResult> result, const QString& message);
    void openFailed(const QString& message);

private:
    void finishReading(const QString& path);

    QWidget* m_window = nullptr;
    QThread* m_reader = nullptr;
    struct Outcome;
    std::shared_ptr<Outcome> m_outcome;  // written by the reading thread, read once it has finished
    QString m_folder;
};

}  // namespace attnscope::app
