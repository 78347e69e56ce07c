#pragma once
// The keyboard's cell cursor of the heatmap and mask views: the arrow keys move the inspected
// (query, key) cell as the pointer would, Shift+arrow by ten cells, Home and End to the row's
// first and last key. Plain arithmetic, so that both views step alike.

#include <QPoint>

#include <optional>

class QCustomPlot;
class QKeyEvent;
class QString;

namespace attnscope::views {

/// The cell after `event` from (query, key) in an n × m matrix, or nullopt when the key is not
/// a cursor key. From no cell (-1, -1) any cursor key goes to (0, 0). x = key, y = query.
std::optional<QPoint> steppedCell(const QKeyEvent& event, int query, int key, long long n, long long m);

/// Pans `plot` (keeping its zoom) so that the cell (query, key) is in view.
void scrollCellIntoView(QCustomPlot* plot, int query, int key);

/// The cell's text as a tooltip beside it, as the pointer over it shows (escaped: tokens are
/// untrusted); nothing while the plot is hidden.
void showCellText(QCustomPlot* plot, int query, int key, const QString& text);

}  // namespace attnscope::views
