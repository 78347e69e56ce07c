#include "gui/window/theme_menu.h"

#include "gui/window/palette.h"

#include <QAction>
#include <QActionGroup>
#include <QMenu>

namespace attnscope::app {

ThemeMenu::ThemeMenu(QMenu* viewMenu, QWidget* window) : QObject(window), m_window(window) {
    viewMenu->addSeparator();
    QMenu* menu = viewMenu->addMenu(tr("&Theme"));
    auto* group = new QActionGroup(this);
    m_light = menu->addAction(tr("&Light"), this, [this] { setTheme(QStringLiteral("light")); });
    m_dark = menu->addAction(tr("&Dark"), this, [this] { setTheme(QStringLiteral("dark")); });
    for (QAction* action : {m_light, m_dark}) {
        action->setCheckable(true);
        group->addAction(action);
    }
    m_light->setChecked(true);
}

void ThemeMenu::setTheme(const QString& name) {
    const Theme theme = themeFromName(name);
    m_theme = attnscope::app::themeName(theme);
    applyTheme(theme, m_window);
    m_light->setChecked(theme == Theme::Light);
    m_dark->setChecked(theme == Theme::Dark);
}

}  // namespace attnscope::app
