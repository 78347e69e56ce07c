#include "views/compare/compare_difference_map.h"

#include "views/widgets/cell_pointer.h"

#include <attnscope/result_roles.h>

#include "views/data/colormap.h"
#include "views/diagnostics/plot_style.h"
#include "views/data/error_summary.h"
#include "views/widgets/qcp.h"

#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Range of an all-zero difference: a tiny symmetric range keeps the map centred (and white).
constexpr double kZeroRange = 1e-12;

QCPColorMap* mapOf(QCustomPlot* plot) { return static_cast<QCPColorMap*>(plot->plottable(0)); }
QCPTextElement* titleOf(QCustomPlot* plot) { return static_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0)); }
QCPItemRect* markerOf(QCustomPlot* plot) { return static_cast<QCPItemRect*>(plot->item(0)); }

}  // namespace

CompareDifferenceMap::CompareDifferenceMap(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    QFont titleFont = m_plot->font();
    titleFont.setBold(true);
    auto* title = new QCPTextElement(m_plot, QString(), titleFont);
    title->setTextColor(m_plot->palette().color(QPalette::Text));
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, title);
    auto* map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    map->setInterpolate(false);
    map->setTightBoundary(false);  // whole cells at the edges (true halves the first and last)
    auto* bar = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(1, 1, bar);
    bar->setType(QCPAxis::atRight);
    bar->setBarWidth(10);
    map->setColorScale(bar);
    bar->setGradient(gradientFromLut(divergingColormap()));
    map->setGradient(bar->gradient());
    styleDiagnosticAxis(bar->axis(), m_plot->palette().color(QPalette::Text), m_plot->font());
    auto* margins = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    bar->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_plot->xAxis->setLabel(tr("key"));
    m_plot->yAxis->setLabel(tr("query"));
    m_plot->yAxis->setRangeReversed(true);  // query 0 on top, as in the panes
    auto* marker = new QCPItemRect(m_plot);
    marker->setPen(QPen(QColor(20, 20, 20), 2.0));  // dark: visible on red, blue and the white centre
    marker->setBrush(Qt::NoBrush);
    marker->setVisible(false);
    // The pointer over a cell marks it in every pane (CompareView); no tooltip, no cursor here.
    auto* pointer = new CellPointer(m_plot, this);
    pointer->setKeyboardCursor(false);
    pointer->setExtent([this] { return hasData() ? CellPointer::Extent{m_shown.n, m_shown.m} : CellPointer::Extent{}; });
    connect(pointer, &CellPointer::cellHovered, this, &CompareDifferenceMap::cellHovered);
    layout->addWidget(m_plot);
    clear(tr("No difference to show."));
}

CompareDifferenceMap::~CompareDifferenceMap() = default;

void CompareDifferenceMap::clear(const QString& message) {
    m_shown = Cells{};
    m_message = message;
    mapOf(m_plot)->data()->clear();
    titleOf(m_plot)->setText(message);
    markerOf(m_plot)->setVisible(false);
    showEmptyPlot(m_plot, true);
    replotWhenShown(m_plot);
}

CompareDifferenceMap::Cells CompareDifferenceMap::computeCells(const engine::AttentionResult* variant,
                                                             const engine::AttentionResult* reference, int head,
                                                             const QString& label) {
    Cells out;
    if (!variant || !reference) {
        out.error = tr("No difference to show: choose two variants.");
        return out;
    }
    if (!engine::comparableShapes(*variant, *reference)) {
        out.error = tr("%1: the two results have different shapes (%2 x %3 and %4 x %5); they must come from the "
                       "same input and Q, K, V")
                        .arg(label)
                        .arg(variant->n)
                        .arg(variant->m)
                        .arg(reference->n)
                        .arg(reference->m);
        return out;
    }
    if (head < 0 || head >= variant->heads || variant->n <= 0 || variant->m <= 0) {
        out.error = tr("%1: head %2 is not in the result").arg(label).arg(head);
        return out;
    }
    if (!variant->weights || !reference->weights) {
        out.error = tr("%1: a result has no weights").arg(label);
        return out;
    }
    out.n = variant->n;
    out.m = engine::tokenKeys(*variant);  // (a relay column is left out)
    out.factor =
        static_cast<int>(std::max<std::int64_t>(1, (std::max(out.n, out.m) + kMaxDisplaySide - 1) / kMaxDisplaySide));
    out.rows = static_cast<int>((out.n + out.factor - 1) / out.factor);
    out.cols = static_cast<int>((out.m + out.factor - 1) / out.factor);
    out.values.assign(static_cast<std::size_t>(out.rows) * out.cols, 0.0);
    double largest = 0;
    constexpr std::int64_t kRowsPerTile = 16;  // both results read a few rows at a time
    for (std::int64_t i0 = 0; i0 < out.n; i0 += kRowsPerTile) {
        const std::int64_t i1 = std::min(out.n, i0 + kRowsPerTile);
        const engine::WeightTile a = variant->weights->tile(head, i0, i1, 0, out.m);
        const engine::WeightTile b = reference->weights->tile(head, i0, i1, 0, out.m);
        for (std::int64_t i = i0; i < i1; ++i) {
            double* line = out.values.data() + static_cast<std::size_t>(i / out.factor) * out.cols;
            for (std::int64_t j = 0; j < out.m; ++j) {
                const std::size_t at = static_cast<std::size_t>((i - i0) * out.m + j);
                const double d = static_cast<double>(a.weights[at]) - static_cast<double>(b.weights[at]);
                double& cell = line[j / out.factor];
                if (std::abs(d) > std::abs(cell)) cell = d;
                largest = std::max(largest, std::abs(d));
            }
        }
    }
    out.limit = largest > 0 ? largest : kZeroRange;
    return out;
}

void CompareDifferenceMap::setDifference(const engine::AttentionResult* variant,
                                         const engine::AttentionResult* reference, int head, const QString& label) {
    showCells(computeCells(variant, reference, head, label), head, label);
}

void CompareDifferenceMap::showCells(Cells cells, int head, const QString& label) {
    if (!cells.error.isEmpty()) return clear(cells.error);
    m_shown = std::move(cells);
    m_message.clear();
    showEmptyPlot(m_plot, false);
    const Cells& c = m_shown;

    QCPColorMap* map = mapOf(m_plot);
    QCPColorMapData* data = map->data();
    const double offset = (c.factor - 1) / 2.0;
    data->setSize(c.cols, c.rows);
    data->setRange(QCPRange(offset, (c.cols - 1) * c.factor + offset), QCPRange(offset, (c.rows - 1) * c.factor + offset));
    for (int i = 0; i < c.rows; ++i)
        for (int j = 0; j < c.cols; ++j) data->setCell(j, i, c.values[static_cast<std::size_t>(i) * c.cols + j]);
    map->setDataRange(QCPRange(-c.limit, c.limit));
    map->colorScale()->axis()->setLabel(label);
    m_plot->xAxis->setRange(-0.5, static_cast<double>(c.m) - 0.5);
    m_plot->yAxis->setRange(-0.5, static_cast<double>(c.n) - 0.5);
    const QString pooled = c.factor > 1 ? tr(" (largest |difference| per %1×%1 block)").arg(c.factor) : QString();
    titleOf(m_plot)->setText(tr("difference %1, head %2%3").arg(label).arg(head).arg(pooled));
    setMarkedCell(m_hoverQuery, m_hoverKey);
    replotWhenShown(m_plot);
}

void CompareDifferenceMap::setMarkedCell(int query, int key) {
    m_hoverQuery = query;
    m_hoverKey = key;
    QCPItemRect* marker = markerOf(m_plot);
    const bool valid = hasData() && query >= 0 && key >= 0 && query < m_shown.n && key < m_shown.m;
    marker->setVisible(valid);
    if (valid) {
        marker->topLeft->setCoords(key - 0.5, query - 0.5);
        marker->bottomRight->setCoords(key + 0.5, query + 0.5);
    }
    replotWhenShown(m_plot);
}

double CompareDifferenceMap::cellValue(int query, int key) const {
    if (query < 0 || key < 0 || query >= m_shown.rows || key >= m_shown.cols) return kNaN;
    return mapOf(m_plot)->data()->cell(key, query);
}

std::pair<double, double> CompareDifferenceMap::colorRange() const {
    const QCPRange range = mapOf(m_plot)->dataRange();
    return {range.lower, range.upper};
}

QString CompareDifferenceMap::colormapName() const { return divergingColormap().name(); }

QString CompareDifferenceMap::title() const { return titleOf(m_plot)->text(); }

}  // namespace attnscope::views
