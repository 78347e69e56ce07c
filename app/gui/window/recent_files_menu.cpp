#include "gui/window/recent_files_menu.h"

#include "gui/settings/app_settings.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace attnscope::app {

RecentFilesMenu::RecentFilesMenu(QMenu* menu, bool persist, QObject* parent)
    : QObject(parent), m_menu(menu), m_persist(persist) {
    // Files that vanished since are dropped each time the menu opens.
    connect(m_menu, &QMenu::aboutToShow, this, &RecentFilesMenu::rebuild);
    rebuild();
}

void RecentFilesMenu::setPaths(const QStringList& paths) {
    m_recent = RecentFiles(paths);
    rebuild();
}

void RecentFilesMenu::remember(const QString& path) {
    m_recent.add(path);
    store();
    rebuild();
}

void RecentFilesMenu::store() const {
    if (!m_persist) return;
    QSettings stored;
    AppSettings::saveRecentFiles(stored, m_recent.paths());
}

void RecentFilesMenu::rebuild() {
    if (m_recent.pruneMissing() > 0) store();
    m_menu->clear();
    int number = 1;
    for (const QString& path : m_recent.paths()) {
        // "&1 name" gives keyboard access; the full path is in the tooltip and status tip.
        const QString label = number < 10 ? QStringLiteral("&%1 %2").arg(number).arg(QFileInfo(path).fileName())
                                          : QFileInfo(path).fileName();
        QAction* action = m_menu->addAction(label, this, [this, path] { Q_EMIT openRequested(path); });
        action->setData(path);
        action->setToolTip(QDir::toNativeSeparators(path));
        action->setStatusTip(QDir::toNativeSeparators(path));
        ++number;
    }
    if (m_recent.paths().isEmpty()) m_menu->addAction(tr("(no recent files)"))->setEnabled(false);
    m_menu->addSeparator();
    QAction* clear = m_menu->addAction(tr("&Clear"), this, [this] {
        m_recent.clear();
        store();
        rebuild();
    });
    clear->setObjectName(QStringLiteral("clearRecentFiles"));
    clear->setEnabled(!m_recent.paths().isEmpty());
}

}  // namespace attnscope::app
