#pragma once
// The window's size on its first start (no saved geometry): most of the primary screen — the
// settings column and the views both need room — capped so that a large monitor does not get a
// window wider than the layout uses; centred.

#include <QSize>

class QWidget;

namespace attnscope::app {

void fitToPrimaryScreen(QWidget* window, QSize largest);

}  // namespace attnscope::app
