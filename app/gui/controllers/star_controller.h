#pragma once
// The Star-Transformer player's work outside the view: its cycles computed on the engine thread,
// a trained Star-Transformer folder picked for it, and its cycles exported as frames and a strip
// for slides (File ▸ Export Star-Transformer Cycles…).

#include <QObject>
#include <QString>

class QWidget;

namespace attnscope::views {
class StarPlayer;
}

namespace attnscope::app {

class EngineRunner;
class ExportController;

class StarController : public QObject {
    Q_OBJECT
public:
    /// `window` parents the dialogs (message boxes only with `dialogs`); `exports` gives the
    /// resolution and remembers the folder.
    StarController(EngineRunner* runner, views::StarPlayer* player, QWidget* window, QObject* parent);

    void setExports(ExportController* exports, bool dialogs);
    /// The cycles as PNG frames and a strip into `folder`; "" or the error (also reported).
    QString exportCyclesTo(const QString& folder);
    /// Asks for the folder first; an error also opens a dialog.
    void exportCyclesInteractive();

Q_SIGNALS:
    void report(const QString& text, const QString& details = {});

private:
    views::StarPlayer* m_player = nullptr;
    QWidget* m_window = nullptr;
    ExportController* m_exports = nullptr;
    bool m_dialogs = false;
};

}  // namespace attnscope::app
