#include "views/data/plot_palette.h"

#include "views/widgets/qcp.h"

#include <QApplication>
#include <QStyle>
#include <QWidget>

namespace attnscope::views {

namespace {

void styleAxis(QCPAxis* axis, const QColor& fg) {
    if (!axis) return;
    axis->setBasePen(QPen(fg));
    axis->setTickPen(QPen(fg));
    axis->setSubTickPen(QPen(fg));
    axis->setTickLabelColor(fg);
    axis->setLabelColor(fg);
}

void stylePlot(QCustomPlot* plot, const QPalette& palette) {
    const QColor fg = palette.color(QPalette::Text);
    plot->setBackground(palette.brush(QPalette::Base));
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* rect = qobject_cast<QCPAxisRect*>(element)) {
            for (QCPAxis* axis : rect->axes()) styleAxis(axis, fg);
        } else if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
            styleAxis(scale->axis(), fg);
        } else if (auto* text = qobject_cast<QCPTextElement*>(element)) {
            text->setTextColor(fg);
        } else if (auto* legend = qobject_cast<QCPLegend*>(element)) {
            legend->setTextColor(fg);
            legend->setBrush(palette.brush(QPalette::Base));
            legend->setBorderPen(QPen(fg));
        }
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace

void applyPaletteToPlots(QWidget* root, const QPalette& palette) {
    if (!root) return;
    if (auto* plot = qobject_cast<QCustomPlot*>(root)) stylePlot(plot, palette);
    for (QCustomPlot* plot : root->findChildren<QCustomPlot*>()) stylePlot(plot, palette);
}

bool LightFigureScope::isDark(const QPalette& palette) { return palette.color(QPalette::Base).lightness() < 128; }

LightFigureScope::LightFigureScope(QWidget* view) {
    if (!view || !isDark(view->palette())) return;
    m_view = view;
    m_oldPalette = view->palette();
    m_hadOwnPalette = view->testAttribute(Qt::WA_SetPalette);
    const QPalette light = QApplication::style()->standardPalette();
    view->setPalette(isDark(light) ? QPalette(Qt::black, Qt::white) : light);
    applyPaletteToPlots(view, view->palette());
}

LightFigureScope::~LightFigureScope() {
    if (!m_view) return;
    m_view->setPalette(m_hadOwnPalette ? m_oldPalette : QPalette());
    applyPaletteToPlots(m_view, m_view->palette());
}

}  // namespace attnscope::views
