#include "views/cell_cursor.h"

#include <QKeyEvent>

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

}  // namespace attnscope::views
