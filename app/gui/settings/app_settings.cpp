#include "gui/settings/app_settings.h"

#include <QSettings>
#include <QStringList>

#include <limits>

namespace attnscope::app {

namespace {
constexpr char kTokenizerKey[] = "run/tokenizer";
constexpr char kVariantKey[] = "run/variant";
constexpr char kHeadsKey[] = "run/heads";
constexpr char kHeadDimKey[] = "run/headDim";
constexpr char kSeedKey[] = "run/seed";
constexpr char kGeometryKey[] = "window/geometry";
constexpr char kStateKey[] = "window/state";
constexpr char kStateVersionKey[] = "window/stateVersion";
constexpr char kHeatmapColormapKey[] = "heatmap/colormap";
constexpr char kHeatmapScaleKey[] = "heatmap/scale";
constexpr char kHeatmapPoolingKey[] = "heatmap/pooling";
constexpr char kExportDpiKey[] = "export/dpi";
constexpr char kExportFolderKey[] = "export/folder";
constexpr char kThemeKey[] = "window/theme";
constexpr char kWelcomeSeenKey[] = "window/welcomeSeen";
constexpr char kRecentFilesKey[] = "files/recent";

/// `fallback` unless the stored text is one of `allowed`.
QString readChoice(QSettings& s, const char* key, const QString& fallback, const QStringList& allowed) {
    const QString v = s.value(QLatin1String(key), fallback).toString();
    return allowed.contains(v) ? v : fallback;
}

int readInt(QSettings& s, const char* key, int fallback, int lo, int hi) {
    bool ok = false;
    const int v = s.value(QLatin1String(key)).toInt(&ok);
    return ok && v >= lo && v <= hi ? v : fallback;
}
}  // namespace

AppSettings AppSettings::load(QSettings& s) {
    AppSettings out;
    const QString tokenizer = s.value(QLatin1String(kTokenizerKey), out.tokenizer).toString();
    if (tokenizer == QLatin1String("bytes") || tokenizer == QLatin1String("chars") ||
        tokenizer == QLatin1String("words"))
        out.tokenizer = tokenizer;
    out.variantId = s.value(QLatin1String(kVariantKey), out.variantId).toString();
    out.heads = readInt(s, kHeadsKey, out.heads, 1, 64);
    out.headDim = readInt(s, kHeadDimKey, out.headDim, 1, 1024);
    out.seed = readInt(s, kSeedKey, out.seed, 0, std::numeric_limits<int>::max());
    out.heatmapColormap = readChoice(s, kHeatmapColormapKey, out.heatmapColormap,
                                     {QStringLiteral("viridis"), QStringLiteral("magma"), QStringLiteral("cividis"), QStringLiteral("rdbu")});
    out.heatmapScale = readChoice(s, kHeatmapScaleKey, out.heatmapScale, {QStringLiteral("linear"), QStringLiteral("log")});
    out.heatmapPooling = readChoice(s, kHeatmapPoolingKey, out.heatmapPooling, {QStringLiteral("max"), QStringLiteral("mean")});
    out.exportDpi = readInt(s, kExportDpiKey, out.exportDpi, 72, 1200);
    out.exportFolder = s.value(QLatin1String(kExportFolderKey), out.exportFolder).toString();
    out.theme = readChoice(s, kThemeKey, out.theme, {QStringLiteral("light"), QStringLiteral("dark")});
    out.recentFiles = s.value(QLatin1String(kRecentFilesKey)).toStringList();
    out.welcomeSeen = s.value(QLatin1String(kWelcomeSeenKey), false).toBool();
    out.windowGeometry = s.value(QLatin1String(kGeometryKey)).toByteArray();
    // A state saved by another layout version would misplace docks: drop it.
    if (s.value(QLatin1String(kStateVersionKey)).toInt() == kWindowStateVersion)
        out.windowState = s.value(QLatin1String(kStateKey)).toByteArray();
    return out;
}

void AppSettings::save(QSettings& s) const {
    s.setValue(QLatin1String(kTokenizerKey), tokenizer);
    s.setValue(QLatin1String(kVariantKey), variantId);
    s.setValue(QLatin1String(kHeadsKey), heads);
    s.setValue(QLatin1String(kHeadDimKey), headDim);
    s.setValue(QLatin1String(kSeedKey), seed);
    s.setValue(QLatin1String(kHeatmapColormapKey), heatmapColormap);
    s.setValue(QLatin1String(kHeatmapScaleKey), heatmapScale);
    s.setValue(QLatin1String(kHeatmapPoolingKey), heatmapPooling);
    s.setValue(QLatin1String(kExportDpiKey), exportDpi);
    s.setValue(QLatin1String(kExportFolderKey), exportFolder);
    s.setValue(QLatin1String(kThemeKey), theme);
    s.setValue(QLatin1String(kWelcomeSeenKey), welcomeSeen);
    saveRecentFiles(s, recentFiles);
    s.setValue(QLatin1String(kGeometryKey), windowGeometry);
    s.setValue(QLatin1String(kStateKey), windowState);
    s.setValue(QLatin1String(kStateVersionKey), kWindowStateVersion);
}

void AppSettings::saveRecentFiles(QSettings& s, const QStringList& files) {
    s.setValue(QLatin1String(kRecentFilesKey), files);
}

}  // namespace attnscope::app
