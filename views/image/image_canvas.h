#pragma once
// The picture with overlays drawn over it, one tile per head shown (the selected head, or every
// head in a grid). Draws the picture itself at its full resolution (an SVG or PDF export embeds
// it whole), each head's overlay image (overlay_image.h) stretched over the token grid's place,
// nearest or smooth, and the query cell outlined. A click on a cell of any tile chooses the query.

#include <attnscope/types.h>

#include <QImage>
#include <QVector>
#include <QWidget>

#include <memory>
#include <optional>

namespace attnscope::views {

class ImageCanvas : public QWidget {
    Q_OBJECT
public:
    struct Tile {
        QImage overlay;  ///< grid.cols × grid.rows, or null (picture only)
        QString label;   ///< under the tile ("head 3"); empty for a single tile
    };

    /// Drawn at the right of the tiles (and so in exports): a colour ramp from 0 to `top`, or
    /// named colours (reasons, groups).
    struct Legend {
        QString title;
        QVector<QRgb> ramp;  ///< bottom to top; empty for named colours
        double top = 0;
        QVector<QPair<QColor, QString>> entries;
        bool empty() const { return ramp.isEmpty() && entries.isEmpty(); }
    };

    explicit ImageCanvas(QWidget* parent = nullptr);

    void setPicture(const QImage& picture);
    /// The grid the overlays cover (its mapping to the picture) and the query token outlined.
    void setGrid(const std::optional<engine::ImageGrid>& grid, int query);
    void setTiles(QVector<Tile> tiles, bool smooth);
    void setLegend(Legend legend);
    const Legend& legend() const { return m_legend; }

    const QImage& picture() const { return m_picture; }
    const QVector<Tile>& tiles() const { return m_tiles; }
    /// The token of the grid cell under `pos` (any tile), -1 outside the grid.
    int tokenAt(const QPoint& pos) const;
    /// Where tile `index`'s picture is drawn, in widget coordinates.
    QRectF pictureRect(int index) const;
    /// Where the grid cell (row, col) of tile `index` is drawn.
    QRectF cellRect(int index, std::int64_t row, std::int64_t col) const;

    QSize sizeHint() const override { return {480, 400}; }
    QSize minimumSizeHint() const override { return {160, 140}; }

Q_SIGNALS:
    void tokenClicked(int token);
    void tokenHovered(int token);  ///< -1 when the pointer leaves the grid

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    int columns() const;
    /// The width the tiles may use (the legend takes the rest).
    double tilesWidth() const;
    void paintLegend(QPainter& painter) const;
    QRectF tileArea(int index) const;
    /// The grid's whole extent in picture pixels (cells past a padded edge included).
    QRectF gridSourceRect() const;

    QImage m_picture;
    std::optional<engine::ImageGrid> m_grid;
    int m_query = -1;
    QVector<Tile> m_tiles;
    bool m_smooth = false;
    Legend m_legend;
};

}  // namespace attnscope::views
