#pragma once
// The keyboard's cell cursor of the heatmap and mask views: the arrow keys move the inspected
// (query, key) cell as the pointer would, Shift+arrow by ten cells, Home and End to the row's
// first and last key. Plain arithmetic, so that both views step alike.

#include <QPoint>

#include <optional>

class QKeyEvent;

namespace attnscope::views {

/// The cell after `event` from (query, key) in an n × m matrix, or nullopt when the key is not
/// a cursor key. From no cell (-1, -1) any cursor key goes to (0, 0). x = key, y = query.
std::optional<QPoint> steppedCell(const QKeyEvent& event, int query, int key, long long n, long long m);

}  // namespace attnscope::views
