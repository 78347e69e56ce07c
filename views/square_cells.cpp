#include "views/square_cells.h"

#include "views/qcp.h"

#include <algorithm>
#include <cmath>

namespace attnscope::views {

void fitSquareCells(QCustomPlot* plot, QCPLayoutGrid* body, std::int64_t rows, std::int64_t cols,
                    int reservedWidth, int columnGaps) {
    QCPAxisRect* rect = plot->axisRect();
    QSize cap(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX);
    if (rows > 0 && cols > 0) {
        const QRect area = body->rect();
        const int marginW = rect->outerRect().width() - rect->rect().width();
        const int marginH = rect->outerRect().height() - rect->rect().height();
        const int availW = area.width() - reservedWidth - columnGaps * body->columnSpacing() - marginW;
        const int availH = area.height() - 2 * body->rowSpacing() - marginH;
        if (availW <= 0 || availH <= 0) return;
        const double cell = std::min(static_cast<double>(availW) / cols, static_cast<double>(availH) / rows);
        cap = QSize(std::max(1, static_cast<int>(cell * cols)), std::max(1, static_cast<int>(cell * rows)));
    }
    const QSize old = rect->maximumSize();
    if (std::abs(old.width() - cap.width()) <= 2 && std::abs(old.height() - cap.height()) <= 2) return;
    rect->setMaximumSize(cap);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace attnscope::views
