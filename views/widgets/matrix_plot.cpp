#include "views/widgets/matrix_plot.h"

#include "views/diagnostics/plot_style.h"

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {
constexpr double kSpacerStretch = 1e-6;  // the outer rows and columns only get what the cells leave
}

MatrixPlot::MatrixPlot(ColorBar bar, QWidget* parent) : QCustomPlot(parent) {
    // Scientific figures go on the base colour (white in light themes); axes follow the palette.
    m_foreground = palette().color(QPalette::Text);
    setBackground(palette().brush(QPalette::Base));
    m_labelFont = font();
    m_labelFont.setPointSizeF(std::max(9.0, m_labelFont.pointSizeF()));
    QFont titleFont = font();
    titleFont.setPointSizeF(std::max(11.0, titleFont.pointSizeF() + 1));
    titleFont.setBold(true);
    m_title = new QCPTextElement(this, QString(), titleFont);
    m_title->setTextColor(m_foreground);

    QCPAxisRect* rect = axisRect();
    plotLayout()->take(rect);
    plotLayout()->simplify();
    plotLayout()->addElement(0, 0, m_title);
    m_body = new QCPLayoutGrid;
    plotLayout()->addElement(1, 0, m_body);
    m_body->addElement(1, 1, rect);
    rect->setSizeConstraintRect(QCPLayoutElement::scrInnerRect);

    m_colorMap = new QCPColorMap(xAxis, yAxis);
    m_colorMap->setInterpolate(false);
    // Whole cells at the edges too: a tight boundary would cut the outer rows and columns in half.
    m_colorMap->setTightBoundary(false);

    if (bar == ColorBar::Right) {
        m_colorScale = new QCPColorScale(this);
        m_body->addElement(1, 2, m_colorScale);
        m_body->expandTo(3, 4);
        m_body->setColumnStretchFactors({kSpacerStretch, 1.0, 1.0, kSpacerStretch});
        m_colorScale->setType(QCPAxis::atRight);
        m_colorScale->setBarWidth(14);
        styleAxis(m_colorScale->axis(), m_foreground, m_labelFont);
        m_colorMap->setColorScale(m_colorScale);
        auto* margins = new QCPMarginGroup(this);
        rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
        m_colorScale->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    } else {
        m_body->expandTo(3, 3);
        m_body->setColumnStretchFactors({kSpacerStretch, 1.0, kSpacerStretch});
    }
    // The matrix right under its title: the height the square cells leave goes below it.
    m_body->setRowStretchFactors({kSpacerStretch, 1.0, kSpacerStretch * 1e3});

    styleAxis(xAxis, m_foreground, m_labelFont);
    styleAxis(yAxis, m_foreground, m_labelFont);
    yAxis->setRangeReversed(true);  // query 0 on top, as matrices are read
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
}

void MatrixPlot::styleAxis(QCPAxis* axis, const QColor& fg, const QFont& labelFont) {
    styleDiagnosticAxis(axis, fg, labelFont);
    axis->grid()->setVisible(false);  // a grid over cells reads as cell borders
    // Ticks point out of the matrix: inside they covered the first column and the last row.
    axis->setTickLength(0, 4);
    axis->setSubTickLength(0, 2);
}

void MatrixPlot::keepViewOnCells(std::int64_t rows, std::int64_t cols) {
    const auto clamp = [](QCPAxis* axis, double cells) {
        QCPRange range = axis->range();
        const double lo = -0.5, hi = cells - 0.5;
        if (range.size() > hi - lo) range = QCPRange(lo, hi);
        if (range.size() < 1.0) range = QCPRange(range.center() - 0.5, range.center() + 0.5);
        if (range.lower < lo) range += lo - range.lower;
        if (range.upper > hi) range -= range.upper - hi;
        if (range != axis->range()) axis->setRange(range);
    };
    clamp(xAxis, static_cast<double>(cols));
    clamp(yAxis, static_cast<double>(rows));
}

void MatrixPlot::fitCells(std::int64_t rows, std::int64_t cols) {
    QCPAxisRect* rect = axisRect();
    const int reservedWidth = colorBarShown() ? m_colorScale->outerRect().width() : 0;
    const int columnGaps = colorBarShown() ? 3 : 2;
    QSize cap(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX);
    if (rows > 0 && cols > 0) {
        const QRect area = m_body->rect();
        const int marginW = rect->outerRect().width() - rect->rect().width();
        const int marginH = rect->outerRect().height() - rect->rect().height();
        const int availW = area.width() - reservedWidth - columnGaps * m_body->columnSpacing() - marginW;
        const int availH = area.height() - 2 * m_body->rowSpacing() - marginH;
        if (availW <= 0 || availH <= 0) return;
        const double cell = std::min(static_cast<double>(availW) / cols, static_cast<double>(availH) / rows);
        cap = QSize(std::max(1, static_cast<int>(cell * cols)), std::max(1, static_cast<int>(cell * rows)));
    }
    const QSize old = rect->maximumSize();
    if (std::abs(old.width() - cap.width()) <= 2 && std::abs(old.height() - cap.height()) <= 2) return;
    rect->setMaximumSize(cap);
    replot(QCustomPlot::rpQueuedReplot);
}

void MatrixPlot::setColorBarShown(bool shown) {
    if (!m_colorScale || shown == m_colorBarShown) return;
    m_colorBarShown = shown;
    if (shown) {
        m_body->addElement(1, 2, m_colorScale);
        m_body->setColumnStretchFactors({kSpacerStretch, 1.0, 1.0, kSpacerStretch});
    } else {
        m_body->take(m_colorScale);
        m_body->setColumnStretchFactors({kSpacerStretch, 1.0, kSpacerStretch, kSpacerStretch});
    }
    m_colorScale->setVisible(shown);
    replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace attnscope::views
