#include "views/widgets/cell_pointer.h"

#include "views/widgets/qcp.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

std::optional<QPoint> steppedCell(const QKeyEvent& event, int query, int key, long long n, long long m) {
    if (n <= 0 || m <= 0) return std::nullopt;
    const int step = event.modifiers().testFlag(Qt::ShiftModifier) ? 10 : 1;
    // (Ctrl+arrows step heads in the window: leave them to it.)
    if (event.modifiers().testFlag(Qt::ControlModifier)) return std::nullopt;
    int dq = 0, dk = 0;
    switch (event.key()) {
        case Qt::Key_Up: dq = -step; break;
        case Qt::Key_Down: dq = step; break;
        case Qt::Key_Left: dk = -step; break;
        case Qt::Key_Right: dk = step; break;
        case Qt::Key_Home: dk = -static_cast<int>(std::min<long long>(m, 1 << 30)); break;
        case Qt::Key_End: dk = static_cast<int>(std::min<long long>(m, 1 << 30)); break;
        default: return std::nullopt;
    }
    if (query < 0 || key < 0) return QPoint(0, 0);
    const auto clamp = [](long long v, long long size) { return static_cast<int>(std::clamp<long long>(v, 0, size - 1)); };
    return QPoint(clamp(static_cast<long long>(key) + dk, m), clamp(static_cast<long long>(query) + dq, n));
}

void scrollCellIntoView(QCustomPlot* plot, int query, int key) {
    const auto follow = [](QCPAxis* axis, int cell) {
        QCPRange range = axis->range();
        if (cell - 0.5 < range.lower) range += cell - 0.5 - range.lower;
        else if (cell + 0.5 > range.upper) range += cell + 0.5 - range.upper;
        if (range != axis->range()) axis->setRange(range);
    };
    follow(plot->xAxis, key);
    follow(plot->yAxis, query);
}

void showCellText(QCustomPlot* plot, int query, int key, const QString& text) {
    if (!plot->isVisible()) return;
    const QPoint at(static_cast<int>(plot->xAxis->coordToPixel(key)), static_cast<int>(plot->yAxis->coordToPixel(query)));
    const QString html = QStringLiteral("<p style='white-space:pre'>%1</p>").arg(text.toHtmlEscaped());
    QToolTip::showText(plot->mapToGlobal(at + QPoint(12, 12)), html, plot);
}

CellPointer::CellPointer(QCustomPlot* plot, QObject* parent) : QObject(parent), m_plot(plot) {
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);
    connect(m_plot, &QCustomPlot::mouseMove, this, &CellPointer::onMouseMove);
}

void CellPointer::setAnchor(int query, int key) {
    m_anchorQuery = query;
    m_anchorKey = key;
}

bool CellPointer::inMatrix(std::int64_t query, std::int64_t key) const {
    const Extent extent = m_extent ? m_extent() : Extent{};
    return query >= 0 && key >= 0 && query < extent.queries && key < extent.keys;
}

void CellPointer::onMouseMove(QMouseEvent* event) {
    const QPointF pos = event->position();
    const auto key = static_cast<std::int64_t>(std::floor(m_plot->xAxis->pixelToCoord(pos.x()) + 0.5));
    const auto query = static_cast<std::int64_t>(std::floor(m_plot->yAxis->pixelToCoord(pos.y()) + 0.5));
    if (!m_plot->axisRect()->rect().contains(pos.toPoint()) || !inMatrix(query, key)) {
        clearHover();
        return;
    }
    if (query == m_hoverQuery && key == m_hoverKey) return;
    m_hoverQuery = static_cast<int>(query);
    m_hoverKey = static_cast<int>(key);
    Q_EMIT cellHovered(m_hoverQuery, m_hoverKey);
    if (!m_text) return;
    // Tokens are untrusted: escape them and force rich text, which QToolTip would otherwise guess.
    const QString html = QStringLiteral("<p style='white-space:pre'>%1</p>").arg(m_text(m_hoverQuery, m_hoverKey).toHtmlEscaped());
    QToolTip::showText(event->globalPosition().toPoint(), html, m_plot);
}

void CellPointer::moveCursorTo(int query, int key) {
    if (!inMatrix(query, key)) return;
    scrollCellIntoView(m_plot, query, key);
    m_hoverQuery = query;
    m_hoverKey = key;
    setAnchor(query, key);
    Q_EMIT cursorMoved(query, key);
    Q_EMIT cellHovered(query, key);
    if (m_text) showCellText(m_plot, query, key, m_text(query, key));
}

void CellPointer::clearHover() {
    if (m_hoverQuery < 0 && m_hoverKey < 0) return;
    m_hoverQuery = m_hoverKey = -1;
    if (m_text) QToolTip::hideText();
    Q_EMIT cellHovered(-1, -1);
}

bool CellPointer::onKeyPress(const QKeyEvent& event) {
    if (m_zoomFactor > 0.0) {
        const bool in = event.matches(QKeySequence::ZoomIn) || event.key() == Qt::Key_Plus || event.key() == Qt::Key_Equal;
        const bool out = event.matches(QKeySequence::ZoomOut) || event.key() == Qt::Key_Minus;
        if (in || out) {
            Q_EMIT zoomRequested(in ? m_zoomFactor : 1.0 / m_zoomFactor);
            return true;
        }
    }
    if (!m_keyboardCursor) return false;
    const Extent extent = m_extent ? m_extent() : Extent{};
    const int fromQuery = m_hoverQuery >= 0 ? m_hoverQuery : m_anchorQuery;
    const int fromKey = m_hoverKey >= 0 ? m_hoverKey : m_anchorKey;
    const auto cell = steppedCell(event, fromQuery, fromKey, extent.queries, extent.keys);
    if (!cell) return false;
    moveCursorTo(cell->y(), cell->x());
    return true;
}

bool CellPointer::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::Leave) clearHover();
    if (watched == m_plot && event->type() == QEvent::KeyPress && onKeyPress(*static_cast<QKeyEvent*>(event))) return true;
    return QObject::eventFilter(watched, event);
}

}  // namespace attnscope::views
