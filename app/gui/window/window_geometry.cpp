#include "gui/window/window_geometry.h"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>

#include <algorithm>

namespace attnscope::app {

void fitToPrimaryScreen(QWidget* window, QSize largest) {
    const QScreen* screen = QGuiApplication::primaryScreen();
    if (!screen) return;
    const QRect available = screen->availableGeometry();
    const QSize size(std::min(available.width() * 9 / 10, largest.width()), std::min(available.height() * 9 / 10, largest.height()));
    window->resize(size);
    window->move(available.center() - QPoint(size.width() / 2, size.height() / 2));
}

}  // namespace attnscope::app
