#include "views/widgets/shared_color_bar.h"

#include "views/widgets/matrix_plot.h"

#include <algorithm>

namespace attnscope::views {

SharedColorBar::SharedColorBar(QWidget* parent) : QCustomPlot(parent) {
    setBackground(palette().brush(QPalette::Base));
    plotLayout()->clear();
    m_scale = new QCPColorScale(this);
    plotLayout()->addElement(0, 0, m_scale);
    m_scale->setType(QCPAxis::atRight);
    m_scale->setBarWidth(14);
    QFont labelFont = font();
    labelFont.setPointSizeF(std::max(9.0, labelFont.pointSizeF()));
    MatrixPlot::styleAxis(m_scale->axis(), palette().color(QPalette::Text), labelFont);
    // Wide enough for "0.0001" ticks and the rotated label; as tall as the panes.
    setMinimumWidth(72);
    setMaximumWidth(96);
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);
}

void SharedColorBar::follow(const QCPColorScale* source, bool shown) {
    setVisible(shown && source);
    if (!source) return;
    QCPAxis* axis = m_scale->axis();
    const QCPAxis* from = source->axis();
    const bool same = m_scale->dataRange() == source->dataRange() && m_scale->dataScaleType() == source->dataScaleType() &&
                      m_scale->gradient() == source->gradient() && axis->label() == from->label() &&
                      axis->numberFormat() == from->numberFormat() && axis->numberPrecision() == from->numberPrecision();
    if (same) return;
    m_scale->setGradient(source->gradient());
    m_scale->setDataScaleType(source->dataScaleType());
    m_scale->setDataRange(source->dataRange());
    axis->setTicker(from->ticker());
    axis->setNumberFormat(from->numberFormat());
    axis->setNumberPrecision(from->numberPrecision());
    axis->setLabel(from->label());
    replot(QCustomPlot::rpQueuedReplot);
}

void SharedColorBar::alignWith(int top, int height) {
    if (height <= 0) return;
    const QMargins margins(0, std::max(0, top), 0, std::max(0, this->height() - top - height));
    if (m_scale->margins() == margins) return;
    m_scale->setAutoMargins(QCP::msLeft | QCP::msRight);
    m_scale->setMargins(margins);
    replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace attnscope::views
