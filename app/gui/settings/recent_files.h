#pragma once
// The File → Recent list (FORMATS.md §5): most recent first, no duplicates, at most kCapacity
// entries, files that vanished are dropped when the menu is shown. Plain list logic; the window
// persists it through AppSettings.

#include <QStringList>

namespace attnscope::app {

class RecentFiles {
public:
    static constexpr int kCapacity = 10;

    explicit RecentFiles(const QStringList& paths = {});

    const QStringList& paths() const { return m_paths; }
    /// Puts `path` (made absolute) first; an older entry of the same file is removed, the oldest
    /// entries beyond kCapacity are dropped.
    void add(const QString& path);
    void remove(const QString& path);
    void clear() { m_paths.clear(); }
    /// Drops entries whose file no longer exists; returns how many were dropped.
    int pruneMissing();

private:
    QStringList m_paths;
};

}  // namespace attnscope::app
