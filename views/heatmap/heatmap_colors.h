#pragma once
// How a heatmap colours a head (FORMATS.md §5): the colour map (diverging RdBu, centred at 0,
// whenever the head has negative weights), the range (the whole head's, or a fixed one shared by
// the compare view's panes) and the log scale's floor; and drawing a matrix's cells with them.

#include "views/data/head_matrix.h"
#include "views/data/heatmap_options.h"

#include <QString>

class QCPColorMap;
class QCPColorScale;

namespace attnscope::views {

struct HeatmapColors {
    /// The log scale's floor relative to the largest value: zeros and smaller weights are drawn
    /// at max(smallest positive weight, kLogFloorRatio x max).
    static constexpr double kLogFloorRatio = 1e-6;

    QString colormap;      ///< the map drawn: "rdbu" whenever the head has negative weights
    bool logScale = false;  ///< asked for, and the head has no negative weights
    double logFloor = 0;    ///< the value zeros are drawn at under the log scale; 0 when linear
    double lo = 0, hi = 1;  ///< the colour range

    /// The colours of `whole` (the whole head, so zooming in keeps them) under `options`; a
    /// fixed range when fixedHi > fixedLo.
    static HeatmapColors of(const HeadMatrix& whole, const HeatmapOptions& options, double fixedLo, double fixedHi);
};

/// Gives `map` and `scale` the built-in colour map `name` (a Colormap::builtin() name).
void setHeatmapGradient(QCPColorMap* map, QCPColorScale* scale, const QString& name);

/// Draws `shown` (the whole head or a zoomed region of it) into `map` and `scale` with `colors`:
/// its values (zeros at the log floor), the gradient, the scale type and ticks, the range.
void drawHeatmapCells(QCPColorMap* map, QCPColorScale* scale, const HeadMatrix& shown, const HeatmapColors& colors);

/// The colour bar's label: "attention weight (max of 4×4 blocks; log, zeros at 1e-06; blank: key
/// not in pattern)"; just "attention weight" without `shown`.
QString heatmapColorBarLabel(const HeadMatrix* shown, bool zoomedRegion, const HeatmapColors& colors, ColorScale asked);

/// The cells of `shown` in `map`'s data, cell centres on input indices (the middle of the block
/// when pooled); keys outside the pattern drawn blank (alpha 0), so they differ from attended keys
/// whose weight is ~0.
void placeHeatmapCells(QCPColorMap* map, const HeadMatrix& shown);

}  // namespace attnscope::views
