#pragma once
// The pointer and the keyboard over a matrix plot's cells, alike in every matrix view (the
// heatmap and its compare panes, the mask, the difference map): the hovered cell, its text
// beside it, the arrow keys' cell cursor (Shift+arrow by ten cells, Home and End to the row's
// first and last key) and +/− zoom. The view says how large its matrix is and what a cell's text
// is; the pointer says which cell is inspected.

#include <QObject>
#include <QPoint>
#include <QString>

#include <cstdint>
#include <functional>
#include <optional>

class QCustomPlot;
class QKeyEvent;
class QMouseEvent;

namespace attnscope::views {

/// The cell after `event` from (query, key) in an n × m matrix, or nullopt when the key is not
/// a cursor key. From no cell (-1, -1) any cursor key goes to (0, 0). x = key, y = query.
std::optional<QPoint> steppedCell(const QKeyEvent& event, int query, int key, long long n, long long m);

/// Pans `plot` (keeping its zoom) so that the cell (query, key) is in view.
void scrollCellIntoView(QCustomPlot* plot, int query, int key);

/// The cell's text as a tooltip beside it, as the pointer over it shows (escaped: tokens are
/// untrusted); nothing while the plot is hidden.
void showCellText(QCustomPlot* plot, int query, int key, const QString& text);

class CellPointer : public QObject {
    Q_OBJECT
public:
    /// The matrix drawn now: queries × keys; {0, 0} while nothing is drawn (nothing is hovered).
    struct Extent {
        std::int64_t queries = 0, keys = 0;
    };

    /// Follows `plot`'s pointer and keys (it becomes the plot's event filter and tracks the mouse).
    explicit CellPointer(QCustomPlot* plot, QObject* parent = nullptr);

    void setExtent(std::function<Extent()> extent) { m_extent = std::move(extent); }
    /// The tooltip of a hovered cell; none: no tooltip.
    void setCellText(std::function<QString(int query, int key)> text) { m_text = std::move(text); }
    /// The arrow keys move a cell cursor (default on).
    void setKeyboardCursor(bool on) { m_keyboardCursor = on; }
    /// + and − ask for a zoom by `factor` and 1 / `factor` (zoomRequested); 0 = off (default).
    void setZoomKeyFactor(double factor) { m_zoomFactor = factor; }
    /// Where the arrow keys start while the pointer is off the matrix (a cell marked by a linked
    /// view); moving the cursor sets it too.
    void setAnchor(int query, int key);

    /// The cell under the pointer or the cursor; -1 when none.
    int hoveredQuery() const { return m_hoverQuery; }
    int hoveredKey() const { return m_hoverKey; }
    /// Marks (query, key) as the inspected cell, as the pointer over it would, scrolled into view
    /// with its text beside it; nothing outside the matrix.
    void moveCursorTo(int query, int key);
    /// Forgets the hovered cell (cellHovered(-1, -1) when there was one).
    void clearHover();

Q_SIGNALS:
    /// The pointer or the cursor is over (query, key) in input indices; (-1, -1) when it left.
    void cellHovered(int query, int key);
    /// The cursor moved to (query, key): emitted just before its cellHovered.
    void cursorMoved(int query, int key);
    void zoomRequested(double factor);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    bool inMatrix(std::int64_t query, std::int64_t key) const;
    void onMouseMove(QMouseEvent* event);
    bool onKeyPress(const QKeyEvent& event);

    QCustomPlot* m_plot;
    std::function<Extent()> m_extent;
    std::function<QString(int, int)> m_text;
    bool m_keyboardCursor = true;
    double m_zoomFactor = 0.0;
    int m_hoverQuery = -1, m_hoverKey = -1;
    int m_anchorQuery = -1, m_anchorKey = -1;
};

}  // namespace attnscope::views
