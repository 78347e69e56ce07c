#pragma once
// View ▸ Theme: light or dark Fusion palettes for the whole application (plots follow), the
// checked entry always the theme in use.

#include <QObject>
#include <QString>

class QAction;
class QMenu;
class QWidget;

namespace attnscope::app {

class ThemeMenu : public QObject {
    Q_OBJECT
public:
    /// Adds the Theme submenu to `viewMenu`; themes are applied to `window` and its children.
    ThemeMenu(QMenu* viewMenu, QWidget* window);

    /// "light" or "dark" (anything else: light).
    void setTheme(const QString& name);
    QString themeName() const { return m_theme; }

private:
    QWidget* m_window = nullptr;
    QString m_theme = QStringLiteral("light");
    QAction* m_light = nullptr;
    QAction* m_dark = nullptr;
};

}  // namespace attnscope::app
