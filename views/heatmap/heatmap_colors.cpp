#include "views/heatmap/heatmap_colors.h"

#include "views/data/colormap.h"
#include "views/widgets/qcp.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("attnscope::views::HeadHeatmap", text); }

QCPColorGradient gradientFrom(const Colormap& lut) {
    // FORMATS.md §5: one stop per LUT entry and as many levels, so level i is exactly entry i.
    QMap<double, QColor> stops;
    const int last = std::max(lut.size() - 1, 1);
    for (int i = 0; i < lut.size(); ++i) stops.insert(static_cast<double>(i) / last, QColor(lut.color(i)));
    QCPColorGradient gradient;
    gradient.setColorStops(stops);
    gradient.setLevelCount(lut.size());
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setNanHandling(QCPColorGradient::nhNanColor);
    gradient.setNanColor(QColor(200, 200, 200));
    return gradient;
}

void copyValues(QCPColorMapData* data, const HeadMatrix& mx, const HeatmapColors& colors) {
    const int rows = mx.rows(), cols = mx.cols();
    // Cells are row-major [query][key] in both, so the values go over in one pass.
    double* cells = ColorMapDataAccess::cells(*data);
    if (!cells || data->keySize() != cols || data->valueSize() != rows) return;
    const float* values = mx.values().data();
    const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (colors.logScale) {
        // Log: zeros would be -inf; they are drawn at the floor, as the legend says.
        const double floorValue = colors.logFloor;
        for (std::size_t i = 0; i < count; ++i) {
            const double v = values[i];
            cells[i] = !(v >= floorValue) && !std::isnan(v) ? floorValue : v;
        }
    } else {
        std::copy(values, values + count, cells);
    }
    ColorMapDataAccess::markModified(*data, QCPRange(std::min<double>(mx.minValue(), colors.logScale ? colors.logFloor : mx.minValue()),
                                                     mx.maxValue()));
}

}  // namespace

HeatmapColors HeatmapColors::of(const HeadMatrix& whole, const HeatmapOptions& options, double fixedLo, double fixedHi) {
    HeatmapColors c;
    const bool fixed = fixedHi > fixedLo;
    const bool signedData = whole.minValue() < 0.0f || (fixed && fixedLo < 0.0);
    c.lo = fixed ? fixedLo : std::min(0.0, static_cast<double>(whole.minValue()));
    c.hi = fixed ? fixedHi : whole.maxValue();
    if (!(c.hi > c.lo)) c.hi = c.lo + 1.0;
    c.colormap = signedData ? QStringLiteral("rdbu") : options.colormap;
    if (signedData) {
        // Diverging: centred at 0 with a symmetric range.
        const double a = std::max({std::abs(c.lo), std::abs(c.hi), static_cast<double>(std::abs(whole.minValue()))});
        c.lo = -a;
        c.hi = a;
    }
    c.logScale = options.scale == ColorScale::Log && !signedData && c.hi > 0.0;
    if (c.logScale) {
        const double floorValue = std::max(static_cast<double>(whole.minPositive()), c.hi * kLogFloorRatio);
        c.logFloor = fixed && fixedLo > 0.0 ? std::max(fixedLo, floorValue) : floorValue;
        c.lo = c.logFloor;
        if (!(c.hi > c.lo)) c.hi = c.lo * 10.0;
    }
    return c;
}

void setHeatmapGradient(QCPColorMap* map, QCPColorScale* scale, const QString& name) {
    const QCPColorGradient gradient = gradientFrom(Colormap::builtin(name));
    scale->setGradient(gradient);
    map->setGradient(gradient);
}

void drawHeatmapCells(QCPColorMap* map, QCPColorScale* scale, const HeadMatrix& shown, const HeatmapColors& colors) {
    copyValues(map->data(), shown, colors);
    setHeatmapGradient(map, scale, colors.colormap);
    const auto scaleType = colors.logScale ? QCPAxis::stLogarithmic : QCPAxis::stLinear;
    scale->setDataScaleType(scaleType);
    map->setDataScaleType(scaleType);
    if (colors.logScale) {
        scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        scale->axis()->setNumberFormat(QStringLiteral("eb"));
        scale->axis()->setNumberPrecision(0);
    } else {
        scale->axis()->setTicker(QSharedPointer<QCPAxisTicker>::create());
        scale->axis()->setNumberFormat(QStringLiteral("gb"));
        scale->axis()->setNumberPrecision(4);
    }
    map->setDataRange(QCPRange(colors.lo, colors.hi));
}

QString heatmapColorBarLabel(const HeadMatrix* shown, bool zoomedRegion, const HeatmapColors& colors, ColorScale asked) {
    const QString label = tr("attention weight");
    if (!shown) return label;
    QStringList parts;
    const int f = shown->poolFactor();
    if (f > 1) parts << (shown->poolMode() == PoolMode::Mean ? tr("mean of %1×%1 blocks") : tr("max of %1×%1 blocks")).arg(f);
    else if (zoomedRegion) parts << tr("zoomed: full resolution");
    if (colors.logScale) parts << tr("log, zeros at %1").arg(colors.logFloor, 0, 'g', 2);
    else if (asked == ColorScale::Log && colors.colormap == QLatin1String("rdbu")) parts << tr("signed: linear");
    if (shown->hasMaskedCells()) parts << tr("blank: key not in pattern");
    return parts.isEmpty() ? label : tr("attention weight (%1)").arg(parts.join(QStringLiteral("; ")));
}

void placeHeatmapCells(QCPColorMap* map, const HeadMatrix& mx) {
    const int rows = mx.rows(), cols = mx.cols(), f = mx.poolFactor();
    const double offset = (f - 1) / 2.0;
    const double k0 = static_cast<double>(mx.colOffset()) + offset, q0 = static_cast<double>(mx.rowOffset()) + offset;
    QCPColorMapData* data = map->data();
    data->setSize(cols, rows);
    data->setRange(QCPRange(k0, k0 + (cols - 1) * f), QCPRange(q0, q0 + (rows - 1) * f));
    data->clearAlpha();
    if (!mx.hasMaskedCells() || rows <= 0 || cols <= 0) return;
    data->setAlpha(0, 0, 255);  // allocates the alpha map, all opaque
    if (unsigned char* alpha = ColorMapDataAccess::alpha(*data)) {
        for (int q = 0; q < rows; ++q)
            for (int k = 0; k < cols; ++k) alpha[static_cast<std::size_t>(q) * cols + k] = mx.inPattern(q, k) ? 255 : 0;
    }
}

}  // namespace attnscope::views
