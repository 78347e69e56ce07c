#pragma once
// Keeps what the user typed or pasted safe: the input text is written to a file shortly after
// each change and when the window goes away, so a crash or an accidental close loses nothing.
// The next start restores it (main.cpp).

#include <QObject>
#include <QString>

#include <optional>

class QPlainTextEdit;
class QTimer;

namespace attnscope::app {

class TextAutosave : public QObject {
    Q_OBJECT
public:
    /// Saves `edit`'s text to `path` `delayMs` after the last change (and on destruction when
    /// unsaved changes remain). The folder is created when missing.
    TextAutosave(QPlainTextEdit* edit, QString path, int delayMs = 1500, QObject* parent = nullptr);
    ~TextAutosave() override;

    /// Writes now (atomically, through QSaveFile). False with lastError() on failure.
    bool save();
    bool dirty() const { return m_dirty; }
    QString lastError() const { return m_lastError; }

    /// The text saved at `path`, or nothing when there is none (or it cannot be read).
    static std::optional<QString> load(const QString& path);
    /// Where the app keeps its autosave (the user's application data folder).
    static QString defaultPath();

Q_SIGNALS:
    void saved();

private:
    QPlainTextEdit* m_edit;
    QString m_path;
    QTimer* m_timer;
    bool m_dirty = false;
    QString m_lastError;
};

}  // namespace attnscope::app
