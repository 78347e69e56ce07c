#include "views/image/image_canvas.h"

#include "views/widgets/figure_painter.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnscope::views {
namespace {

constexpr double kTileGap = 8;
constexpr double kLabelHeight = 18;
constexpr double kLegendWidth = 120;
constexpr double kRampWidth = 16;

}  // namespace

ImageCanvas::ImageCanvas(QWidget* parent) : QWidget(parent) {
    setProperty(FigurePainter::kRenderProperty, true);
    setMouseTracking(true);
    setCursor(Qt::CrossCursor);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ImageCanvas::setPicture(const QImage& picture) {
    m_picture = picture;
    update();
}

void ImageCanvas::setGrid(const std::optional<engine::ImageGrid>& grid, int query) {
    m_grid = grid;
    m_query = query;
    update();
}

void ImageCanvas::setTiles(QVector<Tile> tiles, bool smooth) {
    m_tiles = std::move(tiles);
    m_smooth = smooth;
    update();
}

void ImageCanvas::setLegend(Legend legend) {
    m_legend = std::move(legend);
    update();
}

double ImageCanvas::tilesWidth() const { return m_legend.empty() ? width() : std::max(40.0, width() - kLegendWidth); }

int ImageCanvas::columns() const {
    const int count = std::max<int>(1, m_tiles.size());
    return count == 1 ? 1 : static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count) * tilesWidth() / std::max(1, height()))));
}

QRectF ImageCanvas::tileArea(int index) const {
    const int count = std::max<int>(1, m_tiles.size());
    const int cols = std::min(count, std::max(1, columns()));
    const int rows = (count + cols - 1) / cols;
    const double w = (tilesWidth() - kTileGap * (cols - 1)) / cols, h = (height() - kTileGap * (rows - 1)) / rows;
    return {(index % cols) * (w + kTileGap), (index / cols) * (h + kTileGap), w, h};
}

QRectF ImageCanvas::pictureRect(int index) const {
    if (m_picture.isNull()) return {};
    QRectF area = tileArea(index);
    if (m_tiles.size() > 1) area.setBottom(area.bottom() - kLabelHeight);
    const double scale = std::min(area.width() / m_picture.width(), area.height() / m_picture.height());
    const QSizeF size(m_picture.width() * scale, m_picture.height() * scale);
    return {area.left() + (area.width() - size.width()) / 2, area.top() + (area.height() - size.height()) / 2, size.width(),
            size.height()};
}

QRectF ImageCanvas::gridSourceRect() const {
    const engine::ImageGrid& g = *m_grid;
    const double x0 = g.offsetX * g.scaleX, y0 = g.offsetY * g.scaleY;
    const double x1 = (static_cast<double>(g.cols * g.cell) + g.offsetX) * g.scaleX;
    const double y1 = (static_cast<double>(g.rows * g.cell) + g.offsetY) * g.scaleY;
    return {x0, y0, x1 - x0, y1 - y0};
}

QRectF ImageCanvas::cellRect(int index, std::int64_t row, std::int64_t col) const {
    if (!m_grid || m_picture.isNull()) return {};
    const QRectF picture = pictureRect(index);
    const double sx = picture.width() / m_grid->sourceWidth, sy = picture.height() / m_grid->sourceHeight;
    const engine::ImageBox box = m_grid->cellBox(row, col);
    return {picture.left() + box.x0 * sx, picture.top() + box.y0 * sy, (box.x1 - box.x0) * sx, (box.y1 - box.y0) * sy};
}

int ImageCanvas::tokenAt(const QPoint& pos) const {
    if (!m_grid || m_picture.isNull()) return -1;
    for (int i = 0; i < std::max<int>(1, m_tiles.size()); ++i) {
        const QRectF picture = pictureRect(i);
        if (!picture.contains(pos)) continue;
        const QRectF source = gridSourceRect();
        const double px = (pos.x() - picture.left()) / picture.width() * m_grid->sourceWidth;
        const double py = (pos.y() - picture.top()) / picture.height() * m_grid->sourceHeight;
        const auto col = static_cast<std::int64_t>(std::floor((px - source.left()) / source.width() * m_grid->cols));
        const auto row = static_cast<std::int64_t>(std::floor((py - source.top()) / source.height() * m_grid->rows));
        if (col < 0 || row < 0 || col >= m_grid->cols || row >= m_grid->rows) return -1;
        return static_cast<int>(m_grid->prefix + row * m_grid->cols + col);
    }
    return -1;
}

void ImageCanvas::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    if (m_picture.isNull()) return;
    const int count = std::max<int>(1, m_tiles.size());
    for (int i = 0; i < count; ++i) {
        const QRectF picture = pictureRect(i);
        painter.setRenderHint(QPainter::SmoothPixmapTransform, true);
        painter.drawImage(picture, m_picture);
        if (i < m_tiles.size() && !m_tiles[i].overlay.isNull() && m_grid) {
            painter.save();
            painter.setClipRect(picture);
            painter.setRenderHint(QPainter::SmoothPixmapTransform, m_smooth);
            const QRectF source = gridSourceRect();
            const double sx = picture.width() / m_grid->sourceWidth, sy = picture.height() / m_grid->sourceHeight;
            painter.drawImage(QRectF(picture.left() + source.left() * sx, picture.top() + source.top() * sy, source.width() * sx,
                                     source.height() * sy),
                              m_tiles[i].overlay);
            painter.restore();
        }
        if (m_grid && m_grid->isGridToken(m_query)) {
            const std::int64_t cell = m_query - m_grid->prefix;
            const QRectF r = cellRect(i, cell / m_grid->cols, cell % m_grid->cols);
            painter.setBrush(Qt::NoBrush);
            painter.setPen(QPen(Qt::black, 3));
            painter.drawRect(r);
            painter.setPen(QPen(Qt::white, 1.5));
            painter.drawRect(r);
        }
        if (count > 1 && i < m_tiles.size()) {
            const QRectF area = tileArea(i);
            painter.setPen(palette().color(QPalette::WindowText));
            painter.drawText(QRectF(area.left(), area.bottom() - kLabelHeight, area.width(), kLabelHeight), Qt::AlignCenter,
                             m_tiles[i].label);
        }
    }
    paintLegend(painter);
}

void ImageCanvas::paintLegend(QPainter& painter) const {
    if (m_legend.empty()) return;
    const double left = tilesWidth() + kTileGap;
    const QColor text = palette().color(QPalette::WindowText);
    painter.setPen(text);
    const QFontMetricsF metrics(font());
    double y = 4;
    painter.drawText(QRectF(left, y, kLegendWidth - kTileGap, metrics.height() * 2), Qt::AlignLeft | Qt::TextWordWrap, m_legend.title);
    y += metrics.height() * 2 + 4;
    if (!m_legend.ramp.isEmpty()) {
        const double h = std::max(40.0, height() - y - metrics.height() - 8);
        QImage ramp(1, m_legend.ramp.size(), QImage::Format_ARGB32);
        for (int i = 0; i < m_legend.ramp.size(); ++i) ramp.setPixel(0, m_legend.ramp.size() - 1 - i, m_legend.ramp[i]);
        painter.drawImage(QRectF(left, y, kRampWidth, h), ramp);
        painter.setPen(text);
        painter.drawRect(QRectF(left, y, kRampWidth, h));
        painter.drawText(QPointF(left + kRampWidth + 4, y + metrics.ascent()), QString::number(m_legend.top, 'g', 3));
        painter.drawText(QPointF(left + kRampWidth + 4, y + h), QStringLiteral("0"));
        return;
    }
    for (const auto& [colour, name] : m_legend.entries) {
        painter.fillRect(QRectF(left, y + 2, 12, metrics.height() - 4), colour);
        painter.drawText(QPointF(left + 16, y + metrics.ascent()), metrics.elidedText(name, Qt::ElideRight, kLegendWidth - 24));
        y += metrics.height() + 2;
        if (y > height() - metrics.height()) break;
    }
}

void ImageCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    const int token = tokenAt(event->position().toPoint());
    if (token >= 0) Q_EMIT tokenClicked(token);
}

void ImageCanvas::mouseMoveEvent(QMouseEvent* event) { Q_EMIT tokenHovered(tokenAt(event->position().toPoint())); }

void ImageCanvas::leaveEvent(QEvent*) { Q_EMIT tokenHovered(-1); }

}  // namespace attnscope::views
