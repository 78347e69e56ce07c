#pragma once
// File → Recent as a menu: the RecentFiles list shown with "&1 name" entries (full path in the
// tooltip), refreshed each time it opens (vanished files dropped), Clear, and kept in QSettings
// when asked. Choosing an entry asks for it to be opened; the window decides how.

#include "gui/settings/recent_files.h"

#include <QObject>
#include <QString>
#include <QStringList>

class QMenu;

namespace attnscope::app {

class RecentFilesMenu : public QObject {
    Q_OBJECT
public:
    /// `menu` is filled and refilled by this object; `persist` writes every change to QSettings.
    RecentFilesMenu(QMenu* menu, bool persist, QObject* parent = nullptr);

    QMenu* menu() const { return m_menu; }
    QStringList paths() const { return m_recent.paths(); }
    void setPaths(const QStringList& paths);
    /// `path` first in the list (File → Open, drops, sessions saved or opened).
    void remember(const QString& path);

Q_SIGNALS:
    /// Intent: the user chose `path` in the menu.
    void openRequested(const QString& path);

private:
    void rebuild();
    void store() const;

    QMenu* m_menu = nullptr;
    bool m_persist = false;
    RecentFiles m_recent;
};

}  // namespace attnscope::app
