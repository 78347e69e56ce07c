#pragma once
// Shared plumbing of the diagnostics views: colour gradients, axis styling, diagnostic lookup.
// Free functions, no class. QCustomPlot types are forward-declared (CONVENTIONS.md rule 2); the
// .cpp files that call these include views/widgets/qcp.h.

#include <attnscope/types.h>

#include <QColor>
#include <QFont>

class QBoxLayout;
class QCPAxis;
class QCPBars;
class QCPColorGradient;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;
class QCustomPlot;
class QLabel;

namespace attnscope::views {

class Colormap;
class CategoricalPalette;

/// The 256-entry diverging map (resources/colormaps/rdbu.csv, index 0 = blue = negative).
const Colormap& divergingColormap();
/// A gradient that reproduces `lut` entry by entry (FORMATS.md §5), NaN drawn light grey.
QCPColorGradient gradientFromLut(const Colormap& lut);
/// `count` discrete levels, level i = palette colour i, for a data range [0, count - 1]; NaN
/// (no category: chunk padding, unrouted query) is transparent, i.e. a gap.
QCPColorGradient categoricalGradient(const CategoricalPalette& palette, int count);
/// Palette-following axes, no grid.
void styleDiagnosticAxis(QCPAxis* axis, const QColor& fg, const QFont& labelFont);
/// White-on-light or dark background and axes from the widget palette; the plot replots itself
/// whenever it is shown (see replotWhenShown()).
void styleDiagnosticPlot(QCustomPlot* plot);
/// Queues a replot when the plot is visible. NOTE: replotting a plot that was never shown draws
/// into an unsized paint buffer (QPainter warnings); hidden plots are replotted when shown.
void replotWhenShown(QCustomPlot* plot);

/// The explanation above a page's plots, added to `layout`: plain text (it may quote user input),
/// word-wrapped, with the pages' margins.
QLabel* addExplanationLabel(QWidget* page, QBoxLayout* layout);
/// Bars over whole heads: the x axis labelled "head" with a tick per head, bars 0.7 wide in `color`.
QCPBars* addHeadBars(QCustomPlot* plot, const QColor& color);

/// An empty or pending plot shows only its title (the message saying why): its axes, colour
/// scales and legend are hidden, so no 0–5 axes or 0–6 colour bar pass for data. Shown again
/// with `empty` false.
void showEmptyPlot(QCustomPlot* plot, bool empty);
/// Shows the plot's legend in a row under the axes, `perLine` entries a line, without a frame:
/// inside the axes a legend hides the data it names.
void placeLegendBelow(QCustomPlot* plot, int perLine);

/// A matrix plot: a bold title row, a colour map with whole cells and no interpolation, and a
/// viridis colour scale on the right, styled from the plot's palette.
struct TitledColorMap {
    QCPTextElement* title = nullptr;
    QCPColorMap* map = nullptr;
    QCPColorScale* scale = nullptr;
};
TitledColorMap addTitledViridisMap(QCustomPlot* plot, const QString& title);

/// The named diagnostic of `result` ("singular_values", not "linformer.singular_values"), or
/// nullptr when the engine did not store it.
const engine::PlainTensor* findDiagnostic(const engine::AttentionResult& result, const char* name);
/// Integer parameter `name` of a result (int or double values), or `fallback`.
long long resultParamInt(const engine::AttentionResult& result, const char* name, long long fallback);

}  // namespace attnscope::views
