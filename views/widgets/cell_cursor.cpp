#include "views/widgets/cell_cursor.h"

#include "views/widgets/qcp.h"

#include <QKeyEvent>
#include <QToolTip>

#include <algorithm>

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

}  // namespace attnscope::views
