#include "views/diagnostics/plot_style.h"

#include "views/data/colormap.h"
#include "views/diagnostics/categorical_palette.h"
#include "views/widgets/qcp.h"

#include <QBoxLayout>
#include <QEvent>
#include <QLabel>

#include <algorithm>

namespace attnscope::views {

namespace {

// Replots its plot when the plot is shown (a diagnostics tab being opened).
class ReplotOnShow : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Show) static_cast<QCustomPlot*>(watched)->replot(QCustomPlot::rpQueuedReplot);
        return false;
    }
};

}  // namespace

const Colormap& divergingColormap() { return Colormap::builtin(QStringLiteral("rdbu")); }

QCPColorGradient gradientFromLut(const Colormap& lut) {
    QMap<double, QColor> stops;
    const int last = std::max(lut.size() - 1, 1);
    for (int i = 0; i < lut.size(); ++i) stops.insert(static_cast<double>(i) / last, QColor(lut.color(i)));
    QCPColorGradient gradient;
    gradient.setColorStops(stops);
    gradient.setLevelCount(std::max(lut.size(), 2));
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setNanHandling(QCPColorGradient::nhNanColor);
    gradient.setNanColor(QColor(200, 200, 200));
    return gradient;
}

QCPColorGradient categoricalGradient(const CategoricalPalette& palette, int count) {
    // Stops sit exactly on the levels, so level i is palette colour i without blending.
    count = std::max(count, 2);
    QMap<double, QColor> stops;
    for (int i = 0; i < count; ++i) stops.insert(static_cast<double>(i) / (count - 1), palette.color(i));
    QCPColorGradient gradient;
    gradient.setColorStops(stops);
    gradient.setLevelCount(count);
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setNanHandling(QCPColorGradient::nhNanColor);
    // Blank, not grey: Tableau 20 has greys of its own, so "no category" must look like a gap.
    gradient.setNanColor(Qt::transparent);
    return gradient;
}

void styleDiagnosticAxis(QCPAxis* axis, const QColor& fg, const QFont& labelFont) {
    axis->setBasePen(QPen(fg));
    axis->setTickPen(QPen(fg));
    axis->setSubTickPen(QPen(fg));
    axis->setTickLabelColor(fg);
    axis->setLabelColor(fg);
    axis->setLabelFont(labelFont);
    axis->grid()->setPen(QPen(QColor(128, 128, 128, 60), 0, Qt::DotLine));
}

QLabel* addExplanationLabel(QWidget* page, QBoxLayout* layout) {
    auto* label = new QLabel(page);
    label->setTextFormat(Qt::PlainText);
    label->setWordWrap(true);
    label->setContentsMargins(8, 4, 8, 2);
    layout->addWidget(label);
    return label;
}

QCPBars* addHeadBars(QCustomPlot* plot, const QColor& color) {
    plot->xAxis->setLabel(QObject::tr("head"));
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);  // whole heads only
    plot->xAxis->setTicker(ticker);
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setWidth(0.7);
    bars->setPen(Qt::NoPen);
    bars->setBrush(color);
    return bars;
}

void showEmptyPlot(QCustomPlot* plot, bool empty) {
    // Only what was shown is hidden, and only that comes back (the unused top and right axes stay
    // hidden; a colour bar its view took out stays out).
    constexpr const char* kHidden = "attnscopeHiddenWhileEmpty";
    const auto toggle = [&](QCPLayerable* item) {
        if (empty && item->visible()) {
            item->setVisible(false);
            item->setProperty(kHidden, true);
        } else if (!empty && item->property(kHidden).toBool()) {
            item->setVisible(true);
            item->setProperty(kHidden, false);
        }
    };
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes()) toggle(axis);
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true))
        if (auto* scale = qobject_cast<QCPColorScale*>(element)) toggle(scale);
    if (plot->legend) toggle(plot->legend);
}

void styleDiagnosticPlot(QCustomPlot* plot) {
    const QPalette palette = plot->palette();
    const QColor fg = palette.color(QPalette::Text);
    plot->setBackground(palette.brush(QPalette::Base));
    QFont labelFont = plot->font();
    labelFont.setPointSizeF(std::max(9.0, labelFont.pointSizeF()));
    for (QCPAxis* axis : plot->axisRect()->axes()) styleDiagnosticAxis(axis, fg, labelFont);
    plot->installEventFilter(new ReplotOnShow(plot));
    // NOTE: QCustomPlot replots on every resize; a plot laid out at 0 px in a hidden page draws into an
    // empty paint buffer and QPainter warns. A small minimum keeps the buffer valid.
    plot->setMinimumSize(120, 80);
}

void replotWhenShown(QCustomPlot* plot) {
    if (plot->isVisible()) plot->replot(QCustomPlot::rpQueuedReplot);
}

void placeLegendBelow(QCustomPlot* plot, int perLine) {
    plot->legend->setVisible(true);
    plot->legend->setFont(plot->font());
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot->legend->setWrap(perLine);
    auto* row = new QCPLayoutGrid;
    plot->plotLayout()->addElement(1, 0, row);
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
    row->setMargins(QMargins(0, 0, 0, 4));
    row->addElement(0, 0, plot->legend);
}

const engine::PlainTensor* findDiagnostic(const engine::AttentionResult& result, const char* name) {
    const auto it = result.diagnostics.find(name);
    return it == result.diagnostics.end() ? nullptr : &it->second;
}

long long resultParamInt(const engine::AttentionResult& result, const char* name, long long fallback) {
    const auto it = result.params.find(name);
    if (it == result.params.end()) return fallback;
    if (const auto* i = std::get_if<std::int64_t>(&it->second)) return *i;
    if (const auto* d = std::get_if<double>(&it->second)) return static_cast<long long>(*d);
    return fallback;
}

TitledColorMap addTitledViridisMap(QCustomPlot* plot, const QString& title) {
    TitledColorMap out;
    QFont titleFont = plot->font();
    titleFont.setBold(true);
    out.title = new QCPTextElement(plot, title, titleFont);
    out.title->setTextColor(plot->palette().color(QPalette::Text));
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, out.title);
    out.map = new QCPColorMap(plot->xAxis, plot->yAxis);
    out.map->setInterpolate(false);
    out.map->setTightBoundary(false);  // whole cells at the edges
    out.scale = new QCPColorScale(plot);
    plot->plotLayout()->addElement(1, 1, out.scale);
    out.scale->setType(QCPAxis::atRight);
    out.scale->setBarWidth(12);
    out.map->setColorScale(out.scale);
    // NOTE: after setColorScale, which makes the map adopt the scale's default gradient.
    out.scale->setGradient(gradientFromLut(Colormap::viridis()));
    out.map->setGradient(out.scale->gradient());
    return out;
}

}  // namespace attnscope::views
