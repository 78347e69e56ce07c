#pragma once
// Square matrix cells in a QCustomPlot body grid, shared by the heatmap and the mask view.

#include <cstdint>

class QCustomPlot;
class QCPLayoutGrid;

namespace attnscope::views {

/// Caps the plot's axis rect so a rows x cols matrix gets square cells inside `body`, after
/// `reservedWidth` pixels (a colour bar) and `columnGaps` column spacings are taken from its
/// width. Call after each layout pass; replots (queued) only when the cap changes, so it settles
/// at once. rows or cols <= 0 removes the cap.
void fitSquareCells(QCustomPlot* plot, QCPLayoutGrid* body, std::int64_t rows, std::int64_t cols,
                    int reservedWidth, int columnGaps);

}  // namespace attnscope::views
