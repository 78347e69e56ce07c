#pragma once
// Every persistent setting, typed and with its default (CONVENTIONS.md rule 11). Keys are
// declared only in app_settings.cpp. Read on the GUI thread and copied into requests by value.

#include <attnscope/variant_catalog.h>

#include <QByteArray>
#include <QString>
#include <QStringList>

class QSettings;

namespace attnscope::app {

struct AppSettings {
    /// Bump when the saved window state no longer fits the window's layout.
    static constexpr int kWindowStateVersion = 1;

    QString tokenizer = QStringLiteral("words");  ///< "bytes" | "chars" | "words"
    QString variantId = QString::fromStdString(engine::exactReference().id);
    int heads = 4;
    int headDim = 32;
    int seed = 0;
    QByteArray windowGeometry;
    QByteArray windowState;  ///< QMainWindow::saveState(kWindowStateVersion)
    QString heatmapColormap = QStringLiteral("viridis");  ///< a views::Colormap::builtin() name
    QString heatmapScale = QStringLiteral("linear");      ///< "linear" | "log"
    QString heatmapPooling = QStringLiteral("max");       ///< "max" | "mean"
    int exportDpi = 300;                                  ///< PNG figures, 72-1200
    QString exportFolder;                                 ///< last folder of an export; empty = home
    QString theme = QStringLiteral("light");              ///< "light" | "dark" (View → Theme)
    QStringList recentFiles;  ///< File → Recent, most recent first (RecentFiles keeps the cap)
    bool welcomeSeen = false;  ///< the first-start card was closed (WelcomeCard)

    /// Missing or invalid values keep their defaults.
    static AppSettings load(QSettings& settings);
    void save(QSettings& settings) const;
    /// Stores only the recent-files list, at once, so a crash does not lose it.
    static void saveRecentFiles(QSettings& settings, const QStringList& files);

    friend bool operator==(const AppSettings& a, const AppSettings& b) {
        return a.tokenizer == b.tokenizer && a.variantId == b.variantId && a.heads == b.heads &&
               a.headDim == b.headDim && a.seed == b.seed && a.windowGeometry == b.windowGeometry &&
               a.windowState == b.windowState && a.heatmapColormap == b.heatmapColormap &&
               a.heatmapScale == b.heatmapScale && a.heatmapPooling == b.heatmapPooling && a.exportDpi == b.exportDpi &&
               a.exportFolder == b.exportFolder && a.theme == b.theme && a.recentFiles == b.recentFiles &&
               a.welcomeSeen == b.welcomeSeen;
    }
};

}  // namespace attnscope::app
