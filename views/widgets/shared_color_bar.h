#pragma once
// One colour bar for small multiples drawn on one colour scale (the compare view's panes): it
// copies the gradient, range, scale type and label of the scale it follows, so the panes can hide
// their own bars and give the room to their cells.

#include "views/widgets/qcp.h"

namespace attnscope::views {

class SharedColorBar : public QCustomPlot {
    Q_OBJECT
public:
    explicit SharedColorBar(QWidget* parent = nullptr);

    /// Shows `source`'s gradient, data range, scale type, number format and label (nothing to
    /// show: hidden bar). Replots only when something changed.
    void follow(const QCPColorScale* source, bool shown);
    QCPColorScale* scale() const { return m_scale; }
    /// Draws the bar from `top` (pixels below the widget's top) for `height` pixels.
    void alignWith(int top, int height);

private:
    QCPColorScale* m_scale = nullptr;
};

}  // namespace attnscope::views
