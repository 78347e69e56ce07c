#include "views/widgets/elided_label.h"

#include <QPainter>
#include <QStyle>
#include <QStyleOption>

namespace attnscope::views {

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
    setTextFormat(Qt::PlainText);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

QSize ElidedLabel::minimumSizeHint() const { return {0, QLabel::minimumSizeHint().height()}; }

QSize ElidedLabel::sizeHint() const { return {fontMetrics().averageCharWidth() * 40, QLabel::sizeHint().height()}; }

void ElidedLabel::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QRect room = contentsRect();
    // One line: the first line of the text, elided to the width.
    const QString line = text().section(QLatin1Char('\n'), 0, 0);
    const QString shown = fontMetrics().elidedText(line, Qt::ElideRight, room.width());
    m_elided = shown != text();
    QStyleOption option;
    option.initFrom(this);
    style()->drawItemText(&painter, room, static_cast<int>(alignment() | Qt::TextSingleLine), option.palette,
                          isEnabled(), shown, foregroundRole());
}

}  // namespace attnscope::views
