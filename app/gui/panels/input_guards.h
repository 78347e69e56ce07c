#pragma once
// Two habits of a desktop tool the widgets do not have by themselves, for every widget of a window:
// - the mouse wheel changes a spin box, combo box or slider only when it has focus; otherwise the
//   wheel scrolls the panel around it (five notches over the parameter panel moved a window size
//   from 4 to 0 unnoticed);
// - the window's own shortcuts (Export Figure, Run, Save, …) work while a text field has focus:
//   a field may not take them for its editing keys (a line edit takes Ctrl+E as "end of line").

#include <QObject>

class QWidget;

namespace attnscope::app {

class InputGuards : public QObject {
    Q_OBJECT
public:
    /// Guards `window` and everything inside it (also widgets added later); installed on the
    /// application, owned by `window`.
    explicit InputGuards(QWidget* window);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    bool isInside(const QObject* object) const;
    bool guardWheel(QWidget* widget, QEvent* event);
    bool isWindowShortcut(QEvent* event) const;

    QWidget* m_window;
};

}  // namespace attnscope::app
