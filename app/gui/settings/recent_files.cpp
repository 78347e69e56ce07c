#include "gui/settings/recent_files.h"

#include <QFileInfo>

namespace attnscope::app {

namespace {
QString normalised(const QString& path) { return QFileInfo(path).absoluteFilePath(); }
}  // namespace

RecentFiles::RecentFiles(const QStringList& paths) {
    // Oldest first, so the stored order survives the de-duplication in add().
    for (auto it = paths.crbegin(); it != paths.crend(); ++it)
        if (!it->isEmpty()) add(*it);
}

void RecentFiles::add(const QString& path) {
    const QString absolute = normalised(path);
    m_paths.removeAll(absolute);
    m_paths.prepend(absolute);
    while (m_paths.size() > kCapacity) m_paths.removeLast();
}

void RecentFiles::remove(const QString& path) { m_paths.removeAll(normalised(path)); }

int RecentFiles::pruneMissing() {
    const qsizetype before = m_paths.size();
    m_paths.removeIf([](const QString& path) { return !QFileInfo(path).isFile(); });
    return static_cast<int>(before - m_paths.size());
}

}  // namespace attnscope::app
