#include "views/widgets/figure_painter.h"

#include "views/widgets/qcp.h"

#include <QAbstractScrollArea>
#include <QFontMetricsF>
#include <QLabel>
#include <QPainter>
#include <QTextLayout>
#include <QWidget>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace attnscope::views {

namespace {

constexpr double kMargin = 12.0;       // logical units around the title, content and caption
constexpr double kTitlePixels = 17.0;  // pixel-sized fonts: the same on every device
constexpr double kCaptionPixels = 12.0;
constexpr double kSeamOverlap = 0.5;  // logical units a vector cell reaches under its later neighbours

bool skipped(const QWidget* widget, const QWidget* root) {
    for (const QWidget* w = widget; w && w != root; w = w->parentWidget())
        if (w->property(FigurePainter::kSkipProperty).toBool()) return true;
    return false;
}

QFont figureFont(double pixels, bool bold) {
    QFont font;
    font.setPixelSize(static_cast<int>(pixels));
    font.setBold(bold);
    return font;
}

/// Lines of `text` wrapped to `width` (logical units) in `font`.
std::vector<QString> wrap(const QString& text, const QFont& font, double width) {
    std::vector<QString> lines;
    for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
        QTextLayout layout(paragraph, font);
        layout.beginLayout();
        for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
            line.setLineWidth(width);
            lines.push_back(paragraph.mid(line.textStart(), line.textLength()).trimmed());
        }
        layout.endLayout();
        if (paragraph.isEmpty()) lines.emplace_back();
    }
    return lines;
}

// The colour maps of a plot that are drawn as rectangles, and the layer they are on.
std::vector<QCPColorMap*> vectorMaps(QCustomPlot* plot) {
    std::vector<QCPColorMap*> maps;
    for (int i = 0; i < plot->plottableCount(); ++i) {
        auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i));
        if (!map || !map->visible() || !map->data() || !map->layer()) continue;
        const QCPColorMapData* data = map->data();
        if (static_cast<long long>(data->keySize()) * data->valueSize() > FigurePainter::kMaxVectorCells) continue;
        maps.push_back(map);
    }
    return maps;
}

// The colours of one row of cells as the map paints them (its gradient, data range, NaN rule and
// alpha); invalid for a cell that is not painted.
void rowColours(QCPColorMap* map, QCPColorGradient& gradient, int value, std::vector<QColor>& out) {
    QCPColorMapData* data = map->data();
    const QCPRange range = map->dataRange();
    const bool log = map->dataScaleType() == QCPAxis::stLogarithmic;
    out.assign(static_cast<std::size_t>(data->keySize()), QColor());
    for (int key = 0; key < data->keySize(); ++key) {
        const double v = data->cell(key, value);
        QColor colour;
        if (std::isnan(v)) {
            switch (gradient.nanHandling()) {
            case QCPColorGradient::nhNanColor: colour = gradient.nanColor(); break;
            case QCPColorGradient::nhLowestColor: colour = QColor::fromRgba(gradient.color(range.lower, range)); break;
            case QCPColorGradient::nhHighestColor: colour = QColor::fromRgba(gradient.color(range.upper, range)); break;
            default: continue;
            }
        } else {
            colour = QColor::fromRgba(gradient.color(v, range, log));
        }
        colour.setAlpha(colour.alpha() * data->alpha(key, value) / 255);
        if (colour.alpha() > 0) out[static_cast<std::size_t>(key)] = colour;
    }
}

// Cells of `map` as rectangles, equal neighbours along a row merged, clipped to its axis rect.
void paintCells(QCPPainter& painter, QCPColorMap* map) {
    QCPColorMapData* data = map->data();
    QCPAxis* keyAxis = map->keyAxis();
    QCPAxis* valueAxis = map->valueAxis();
    const int keys = data->keySize(), values = data->valueSize();
    const double keyStep = keys > 1 ? data->keyRange().size() / (keys - 1) : 1.0;
    const double valueStep = values > 1 ? data->valueRange().size() / (values - 1) : 1.0;
    const auto keyEdge = [&](double index) { return keyAxis->coordToPixel(data->keyRange().lower + (index - 0.5) * keyStep); };
    const auto valueEdge = [&](double index) {
        return valueAxis->coordToPixel(data->valueRange().lower + (index - 0.5) * valueStep);
    };
    QCPColorGradient gradient = map->gradient();  // (once: color() fills its lookup table)
    std::vector<QColor> colours, next;
    painter.save();
    painter.setClipRect(keyAxis->axisRect()->rect(), Qt::IntersectClip);
    painter.setPen(Qt::NoPen);
    painter.setRenderHint(QPainter::Antialiasing, false);
    // Renderers antialias the edges of abutting rectangles into hairline seams (librsvg, PDF
    // viewers): each run reaches kSeamOverlap into the painted neighbours drawn after it (the
    // next run, the next row), which cover the overlap again; blank neighbours get no overlap.
    const double keyDirection = keyEdge(1) >= keyEdge(0) ? 1.0 : -1.0;
    const double valueDirection = valueEdge(1) >= valueEdge(0) ? 1.0 : -1.0;
    const auto painted = [](const std::vector<QColor>& row, int from, int to) {
        if (row.size() < static_cast<std::size_t>(to)) return false;  // (the last row has no next)
        for (int i = from; i < to; ++i)
            if (!row[static_cast<std::size_t>(i)].isValid()) return false;
        return true;
    };
    if (values > 0) rowColours(map, gradient, 0, next);
    for (int v = 0; v < values; ++v) {
        colours.swap(next);
        if (v + 1 < values) rowColours(map, gradient, v + 1, next);
        else next.clear();
        const double y0 = valueEdge(v), y1 = valueEdge(v + 1);
        for (int k = 0; k < keys;) {
            int end = k + 1;
            while (end < keys && colours[static_cast<std::size_t>(end)] == colours[static_cast<std::size_t>(k)]) ++end;
            if (colours[static_cast<std::size_t>(k)].isValid()) {
                double x0 = keyEdge(k), x1 = keyEdge(end), top = y0, bottom = y1;
                if (end < keys && colours[static_cast<std::size_t>(end)].isValid()) x1 += keyDirection * kSeamOverlap;
                if (painted(next, k, end)) bottom += valueDirection * kSeamOverlap;
                painter.fillRect(QRectF(QPointF(x0, top), QPointF(x1, bottom)).normalized(), colours[static_cast<std::size_t>(k)]);
            }
            k = end;
        }
    }
    painter.restore();
}

// Draws a plot whose colour maps become rectangles: first its layers below the maps' layer
// (backgrounds, grid), then the cells, then the plot again without what the first pass drew (no
// backgrounds, no grid, maps hidden). Layers are not hidden in the second pass: an axis is drawn
// only while its axis rect's layer (the background) is visible.
void paintPlotWithVectorCells(QCPPainter& painter, QCustomPlot* plot, const QSize& size, const std::vector<QCPColorMap*>& maps) {
    QCPLayer* mapLayer = maps.front()->layer();
    std::vector<std::pair<QCPLayer*, bool>> layers;
    for (int i = 0; i < plot->layerCount(); ++i) layers.emplace_back(plot->layer(i), plot->layer(i)->visible());
    for (auto& [layer, visible] : layers) layer->setVisible(visible && layer->index() < mapLayer->index());
    painter.save();
    plot->toPainter(&painter, size.width(), size.height());
    painter.restore();
    for (auto& [layer, visible] : layers) layer->setVisible(visible);
    for (QCPColorMap* map : maps) paintCells(painter, map);

    for (QCPColorMap* map : maps) map->setVisible(false);
    QCPLayer* grid = plot->layer(QStringLiteral("grid"));
    const bool gridVisible = grid && grid->visible();
    if (grid) grid->setVisible(false);
    const QBrush background = plot->background();
    plot->setBackground(Qt::NoBrush);
    std::vector<std::pair<QCPAxisRect*, QBrush>> rects;
    for (QCPAxisRect* rect : plot->axisRects()) {
        rects.emplace_back(rect, rect->background());
        rect->setBackground(Qt::NoBrush);
    }
    painter.save();
    plot->toPainter(&painter, size.width(), size.height());
    painter.restore();
    for (auto& [rect, brush] : rects) rect->setBackground(brush);
    plot->setBackground(background);
    if (grid) grid->setVisible(gridVisible);
    for (QCPColorMap* map : maps) map->setVisible(true);
}

}  // namespace

namespace {

// A figure has one title: a view drawn as one plot loses that plot's own title while it is painted
// (several plots keep theirs: they tell the panes apart). What the plot's title said beyond the
// figure's (parameters, n) is in the caption and the sidecar.
class SinglePlotTitleScope {
public:
    explicit SinglePlotTitleScope(QWidget* view) {
        std::vector<QCustomPlot*> plots;
        if (view)
            for (auto* candidate : view->findChildren<QCustomPlot*>())
                if (candidate->isVisibleTo(view) && !skipped(candidate, view) && !candidate->size().isEmpty()) plots.push_back(candidate);
        if (plots.size() != 1) return;
        QCustomPlot* plot = plots.front();
        QCPLayoutGrid* layout = plot->plotLayout();
        // A title on a row of its own above the rest leaves the layout (an empty text element
        // still keeps a line's height); any other title is emptied.
        if (auto* top = qobject_cast<QCPTextElement*>(layout->element(0, 0)); top && layout->columnCount() == 1 && layout->rowCount() > 1) {
            m_takenTitle = top;
            top->setVisible(false);  // (an element out of the layout is still drawn where it was)
            layout->take(top);
            layout->simplify();
        }
        for (int i = 0; i < layout->elementCount(); ++i)
            if (auto* title = qobject_cast<QCPTextElement*>(layout->elementAt(i))) {
                m_titles.emplace_back(title, title->text());
                title->setText(QString());
            }
        if (m_titles.empty() && !m_takenTitle) return;
        // Twice: the first layout lets a matrix plot fit its cells into the room the title
        // left (afterLayout), the second lays out with that fit.
        m_plot = plot;
        relayout();
    }
    ~SinglePlotTitleScope() {
        for (auto& [title, text] : m_titles) title->setText(text);
        if (m_takenTitle) {
            m_plot->plotLayout()->insertRow(0);
            m_plot->plotLayout()->addElement(0, 0, m_takenTitle);
            m_takenTitle->setVisible(true);
        }
        if (m_plot) relayout();
    }
    void relayout() {
        m_plot->replot(QCustomPlot::rpImmediateRefresh);
        m_plot->replot(QCustomPlot::rpImmediateRefresh);
    }
    SinglePlotTitleScope(const SinglePlotTitleScope&) = delete;
    SinglePlotTitleScope& operator=(const SinglePlotTitleScope&) = delete;

private:
    std::vector<std::pair<QCPTextElement*, QString>> m_titles;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_takenTitle = nullptr;
};

}  // namespace

namespace {

// What a plot derives from its layout (square cells, tick spacing) is settled on a replot after
// the layout; an export resizes views just before painting, with no event loop between.
void settle(QCustomPlot* plot) {
    plot->replot(QCustomPlot::rpImmediateRefresh);
    plot->replot(QCustomPlot::rpImmediateRefresh);
}

// The part of a plot its visible elements cover (axes with their labels, colour scales, titles,
// legends), in plot coordinates: a matrix plot's square cells leave blank rows below them.
QRect usedRect(QCustomPlot* plot) {
    QRect used;
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (!element || !element->visible()) continue;
        if (auto* text = qobject_cast<QCPTextElement*>(element); text && text->text().isEmpty()) continue;
        if (qobject_cast<QCPAxisRect*>(element) || qobject_cast<QCPColorScale*>(element) ||
            qobject_cast<QCPTextElement*>(element) || qobject_cast<QCPLegend*>(element))
            used = used.united(element->outerRect());
    }
    return used.isEmpty() ? plot->rect() : used.intersected(plot->rect());
}

}  // namespace

struct FigurePainter::Layout {
    QRect content;  // in view coordinates: the union of what is drawn
    std::vector<std::pair<QCustomPlot*, QRect>> plots;  // the plots' widget rects
    std::vector<QRect> plotUsed;  // what each plot draws on (its elements; blank rows left out)
    std::vector<std::pair<QLabel*, QRect>> labels;
    std::vector<std::pair<QWidget*, QRect>> rendered;  // kRenderProperty widgets
    std::vector<QString> titleLines, captionLines;
    double titleHeight = 0, captionHeight = 0, width = 0;
};

FigurePainter::FigurePainter(QWidget* view, QString title, QString caption)
    : m_view(view), m_title(std::move(title)), m_caption(std::move(caption)) {}

FigurePainter::Layout FigurePainter::layout() const {
    Layout out;
    if (!m_view) return out;
    // Plots and labels only: controls (combo boxes, check boxes) are not part of a figure.
    QList<QWidget*> widgets = m_view->findChildren<QWidget*>();
    widgets.prepend(m_view);  // a custom-painted view (heads grid) is its own content
    for (QWidget* w : widgets) {
        if (w != m_view && (!w->isVisibleTo(m_view) || skipped(w, m_view))) continue;
        if (w->width() <= 0 || w->height() <= 0) continue;
        const QRect rect(w->mapTo(m_view, QPoint(0, 0)), w->size());
        if (w->property(kRenderProperty).toBool()) {
            out.rendered.emplace_back(w, rect);
        } else if (w == m_view) {
            continue;
        } else if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
            settle(plot);
            out.plots.emplace_back(plot, rect);
            out.plotUsed.push_back(usedRect(plot).translated(rect.topLeft()));
            out.content = out.content.united(out.plotUsed.back());
            continue;
        } else if (auto* label = qobject_cast<QLabel*>(w); label && !label->text().isEmpty()) {
            // Labels inside a plot's area would be drawn twice; none exist today.
            out.labels.emplace_back(label, rect);
        } else {
            continue;
        }
        out.content = out.content.united(rect);
    }
    out.width = std::max(out.content.width() + 2 * kMargin, 320.0);
    const QFont titleFont = figureFont(kTitlePixels, true), captionFont = figureFont(kCaptionPixels, false);
    const double textWidth = out.width - 2 * kMargin;
    if (!m_title.isEmpty()) out.titleLines = wrap(m_title, titleFont, textWidth);
    if (!m_caption.isEmpty()) out.captionLines = wrap(m_caption, captionFont, textWidth);
    out.titleHeight = kMargin + out.titleLines.size() * QFontMetricsF(titleFont).lineSpacing();
    out.captionHeight = kMargin + out.captionLines.size() * QFontMetricsF(captionFont).lineSpacing() + kMargin;
    return out;
}

QSize FigurePainter::slideContentSize(const QString& title) {
    const QFont font = figureFont(kSlideTitlePixels, true);
    const double width = kSlideWidth - 2 * kSlideMargin;
    const double titleHeight = title.isEmpty() ? 0 : wrap(title, font, width).size() * QFontMetricsF(font).lineSpacing();
    return {static_cast<int>(width), static_cast<int>(kSlideHeight - 3 * kSlideMargin - titleHeight)};
}

QSize FigurePainter::logicalSize() const {
    const SinglePlotTitleScope oneTitle(m_view);
    const Layout l = layout();
    if (l.content.isEmpty()) return {};
    if (m_slide) return {kSlideWidth, kSlideHeight};
    return {static_cast<int>(std::ceil(l.width)),
            static_cast<int>(std::ceil(l.titleHeight + kMargin + l.content.height() + l.captionHeight))};
}

double FigurePainter::minScaleForCells() const {
    double scale = 1.0;
    for (const auto& [plot, rect] : layout().plots) {
        for (int i = 0; i < plot->plottableCount(); ++i) {
            auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i));
            if (!map || !map->visible() || !map->data()) continue;
            const QCPColorMapData* data = map->data();
            // Cell size in plot pixels along each axis; the plot keeps its size when exported.
            auto need = [](QCPAxis* axis, const QCPRange& range, int cells) {
                if (cells < 1 || !axis) return 1.0;
                const double step = cells > 1 ? range.size() / (cells - 1) : 1.0;
                const double pixels = std::abs(axis->coordToPixel(range.lower + step) - axis->coordToPixel(range.lower));
                return pixels > 0 && pixels < 1.0 ? 1.0 / pixels : 1.0;
            };
            scale = std::max({scale, need(map->keyAxis(), data->keyRange(), data->keySize()),
                              need(map->valueAxis(), data->valueRange(), data->valueSize())});
        }
    }
    return scale;
}

bool FigurePainter::paint(QPaintDevice* device, double scale) const {
    const SinglePlotTitleScope oneTitle(m_view);
    const Layout l = layout();
    QCPPainter painter;
    if (!device || !painter.begin(device)) return false;
    painter.scale(scale, scale);
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    // Images that remain (colour bars, maps too large for rectangles) stay lossless in a PDF: its
    // engine otherwise stores every colour image as a JPEG.
    painter.setRenderHint(QPainter::LosslessImageRendering, true);
    const QSize size = logicalSize();
    painter.fillRect(QRectF(0, 0, size.width(), size.height()), Qt::white);  // white figures (FORMATS.md §5)
    if (m_slide) {
        paintSlide(painter, l);
        return painter.end();
    }

    painter.setPen(Qt::black);
    double y = kMargin;
    painter.setFont(figureFont(kTitlePixels, true));
    const double titleStep = QFontMetricsF(painter.font()).lineSpacing();
    for (const QString& line : l.titleLines) {
        painter.drawText(QRectF(kMargin, y, l.width - 2 * kMargin, titleStep), Qt::AlignHCenter | Qt::AlignTop, line);
        y += titleStep;
    }

    const QPointF origin((l.width - l.content.width()) / 2.0 - l.content.left(), l.titleHeight + kMargin - l.content.top());
    paintContent(painter, l, origin);

    painter.setPen(QColor(40, 40, 40));
    painter.setFont(figureFont(kCaptionPixels, false));
    const double captionStep = QFontMetricsF(painter.font()).lineSpacing();
    y = l.titleHeight + kMargin + l.content.height() + kMargin;
    for (const QString& line : l.captionLines) {
        painter.drawText(QRectF(kMargin, y, l.width - 2 * kMargin, captionStep), Qt::AlignLeft | Qt::AlignTop, line);
        y += captionStep;
    }
    return painter.end();
}

void FigurePainter::paintSlide(QCPPainter& painter, const Layout& l) const {
    // The title across the top, then the content scaled uniformly into what is left, centred.
    const QFont font = figureFont(kSlideTitlePixels, true);
    const double step = QFontMetricsF(font).lineSpacing();
    double y = kSlideMargin;
    painter.setPen(Qt::black);
    painter.setFont(font);
    for (const QString& line : wrap(m_title, font, kSlideWidth - 2 * kSlideMargin)) {
        if (m_title.isEmpty()) break;
        painter.drawText(QRectF(kSlideMargin, y, kSlideWidth - 2 * kSlideMargin, step), Qt::AlignHCenter | Qt::AlignTop, line);
        y += step;
    }
    const QRectF room(kSlideMargin, y + kSlideMargin, kSlideWidth - 2 * kSlideMargin, kSlideHeight - y - 2 * kSlideMargin);
    const double s = std::min(room.width() / l.content.width(), room.height() / l.content.height());
    painter.save();
    painter.translate(room.left() + (room.width() - l.content.width() * s) / 2.0, room.top() + (room.height() - l.content.height() * s) / 2.0);
    painter.scale(s, s);
    paintContent(painter, l, QPointF(-l.content.left(), -l.content.top()));
    painter.restore();
}

void FigurePainter::paintContent(QCPPainter& painter, const Layout& l, const QPointF& origin) const {
    for (std::size_t i = 0; i < l.plots.size(); ++i) {
        const auto& [plot, rect] = l.plots[i];
        painter.save();
        painter.translate(origin + QPointF(rect.topLeft()));
        painter.setClipRect(l.plotUsed[i].translated(-rect.topLeft()));
        // toPainter() lays the plot out again at its widget size and draws it with our painter.
        const std::vector<QCPColorMap*> maps = m_vectorCells ? vectorMaps(plot) : std::vector<QCPColorMap*>{};
        if (maps.empty())
            plot->toPainter(&painter, rect.width(), rect.height());
        else
            paintPlotWithVectorCells(painter, plot, rect.size(), maps);
        painter.restore();
    }
    for (const auto& [widget, rect] : l.rendered) {
        painter.save();
        painter.translate(origin + QPointF(rect.topLeft()));
        // A table (a scroll area) draws its cells and headers in child widgets: take them too.
        const bool scrollArea = qobject_cast<QAbstractScrollArea*>(widget) != nullptr;
        widget->render(&painter, QPoint(), QRegion(),
                       scrollArea ? QWidget::DrawWindowBackground | QWidget::DrawChildren : QWidget::DrawWindowBackground);
        painter.restore();
    }
    for (const auto& [label, rect] : l.labels) {
        painter.save();
        painter.translate(origin + QPointF(rect.topLeft()));
        label->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
        painter.restore();
    }
}

}  // namespace attnscope::views
