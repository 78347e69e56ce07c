#pragma once
// How a heatmap maps weights to colours and pools large heads. Plain values: the app persists
// them (app_settings) and writes them into figure sidecars by their names.

#include "views/data/pool_mode.h"

#include <QString>

namespace attnscope::views {

enum class ColorScale { Linear, Log };

struct HeatmapOptions {
    /// A Colormap::builtin() name. Signed data always gets the diverging "rdbu" map.
    QString colormap = QStringLiteral("viridis");
    ColorScale scale = ColorScale::Linear;
    PoolMode pooling = PoolMode::Max;

    friend bool operator==(const HeatmapOptions& a, const HeatmapOptions& b) {
        return a.colormap == b.colormap && a.scale == b.scale && a.pooling == b.pooling;
    }
    friend bool operator!=(const HeatmapOptions& a, const HeatmapOptions& b) { return !(a == b); }
};

inline QString poolModeName(PoolMode mode) {
    return mode == PoolMode::Mean ? QStringLiteral("mean") : QStringLiteral("max");
}
inline QString colorScaleName(ColorScale scale) {
    return scale == ColorScale::Log ? QStringLiteral("log") : QStringLiteral("linear");
}
/// Unknown names give the default (max, linear).
inline PoolMode poolModeFromName(const QString& name) {
    return name == QLatin1String("mean") ? PoolMode::Mean : PoolMode::Max;
}
inline ColorScale colorScaleFromName(const QString& name) {
    return name == QLatin1String("log") ? ColorScale::Log : ColorScale::Linear;
}

}  // namespace attnscope::views
