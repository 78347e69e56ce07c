#pragma once
// The plot a matrix view draws on (the heatmap, its compare panes, the mask view): a bold title
// above a body grid whose centre holds the matrix, optionally its colour bar to the right, and
// empty outer rows and columns that take what the square cells leave over, so the cells stay
// square, the matrix centred across and right under its title. Axes in the palette's text colour, no grid, query 0 on top.

#include "views/widgets/qcp.h"

#include <cstdint>

namespace attnscope::views {

class MatrixPlot : public QCustomPlot {
public:
    enum class ColorBar { None, Right };

    explicit MatrixPlot(ColorBar bar, QWidget* parent = nullptr);

    QCPTextElement* titleElement() const { return m_title; }
    QCPLayoutGrid* body() const { return m_body; }
    /// Cells drawn whole at the edges (not a tight boundary), no interpolation.
    QCPColorMap* colorMap() const { return m_colorMap; }
    /// Null without ColorBar::Right.
    QCPColorScale* colorScale() const { return m_colorScale; }
    /// The axis label font (at least 9 pt) and the palette's text colour the axes use.
    QFont labelFont() const { return m_labelFont; }
    QColor foreground() const { return m_foreground; }

    /// Caps the axis rect so a rows x cols matrix gets square cells beside the colour bar. Call
    /// after each layout pass (afterLayout); replots (queued) only when the cap changes, so it
    /// settles at once. rows or cols <= 0 removes the cap.
    void fitCells(std::int64_t rows, std::int64_t cols);
    /// Keeps the view on a rows x cols matrix: no panning past its edges, no zooming out beyond it
    /// or in below one cell.
    void keepViewOnCells(std::int64_t rows, std::int64_t cols);
    /// Takes the colour bar out of the plot (hidden, no room kept) or puts it back; small
    /// multiples that share one colour bar hide their own (the compare view's panes).
    void setColorBarShown(bool shown);
    bool colorBarShown() const { return m_colorScale && m_colorBarShown; }

    /// Pens, tick labels and label in `fg`, `labelFont`, no grid.
    static void styleAxis(QCPAxis* axis, const QColor& fg, const QFont& labelFont);

private:
    QCPTextElement* m_title = nullptr;
    QCPLayoutGrid* m_body = nullptr;
    QCPColorMap* m_colorMap = nullptr;
    QCPColorScale* m_colorScale = nullptr;
    bool m_colorBarShown = true;
    QFont m_labelFont;
    QColor m_foreground;
};

}  // namespace attnscope::views
