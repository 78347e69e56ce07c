#include "views/diagnostics/receptive_field_view.h"

#include <attnscope/diagnostics.h>
#include <attnscope/score_terms.h>

#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxLayers = 64;
// Flow below this share of the largest is drawn at the bottom of the log scale.
constexpr double kFlowFloor = 1e-4;

QString legendText() {
    return QObject::tr(
        "The query sits at the top layer. A query sees the keys of its own segment and the M positions of "
        "memory before it, and a key is the layer below's state of that position; so each layer down, the "
        "positions that can reach the query (solid outline) move back by up to M. A model without memory "
        "stays inside the query's segment (dashed). Dai et al. 2019 (§3.2, Fig. 2b): the longest "
        "dependency grows as O(N × L) with N layers. With a Transformer-XL model open, colour is the share "
        "of the query's state that comes from each position's state at that layer (attention rollout, "
        "½·attention + ½·residual per layer, heads averaged; log scale). Click a position to make it the query.");
}

}  // namespace

ReceptiveFieldView::ReceptiveFieldView(QWidget* parent) : ResultPage(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 4, 8, 2);
    auto* queryLabel = new QLabel(tr("&Query"), this);
    m_queryBox = new QSpinBox(this);
    m_queryBox->setObjectName(QStringLiteral("receptiveFieldQuery"));
    m_queryBox->setToolTip(tr("The query position at the top layer (or click the plot)"));
    queryLabel->setBuddy(m_queryBox);
    connect(m_queryBox, &QSpinBox::valueChanged, this, [this](int value) { setQuery(value); });
    auto* layersLabel = new QLabel(tr("&Layers"), this);
    m_layersBox = new QSpinBox(this);
    m_layersBox->setObjectName(QStringLiteral("receptiveFieldLayers"));
    m_layersBox->setRange(1, kMaxLayers);
    m_layersBox->setValue(kDefaultLayers);
    m_layersBox->setToolTip(tr("How many layers the cone goes down (a model sets its own)"));
    layersLabel->setBuddy(m_layersBox);
    connect(m_layersBox, &QSpinBox::valueChanged, this, [this](int value) { setLayers(value); });
    m_info = new QLabel(this);
    m_info->setTextFormat(Qt::PlainText);
    m_info->setWordWrap(true);
    bar->addWidget(queryLabel);
    bar->addWidget(m_queryBox);
    bar->addWidget(layersLabel);
    bar->addWidget(m_layersBox);
    bar->addWidget(m_info, 1);
    layout->addLayout(bar);

    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    TitledColorMap parts = addTitledViridisMap(m_plot, tr("Receptive field of the query"));
    m_map = parts.map;
    m_scale = parts.scale;
    parts.scale->setDataScaleType(QCPAxis::stLogarithmic);
    parts.scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    parts.scale->axis()->setLabel(tr("share of the query's state"));
    styleDiagnosticAxis(parts.scale->axis(), m_plot->palette().color(QPalette::Text), m_plot->font());
    m_plot->xAxis->setLabel(tr("position"));
    m_plot->yAxis->setLabel(tr("layer (0 = embeddings)"));
    auto ticker = QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_plot->xAxis->setTicker(ticker);
    auto layerTicker = QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed);
    layerTicker->setTickStep(1.0);
    layerTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_plot->yAxis->setTicker(layerTicker);
    connect(m_plot, &QCustomPlot::mousePress, this, &ReceptiveFieldView::onPlotClick);
    layout->addWidget(m_plot, 1);

    auto* legend = new QLabel(legendText(), this);
    legend->setObjectName(QStringLiteral("receptiveFieldLegend"));
    legend->setWordWrap(true);
    legend->setTextFormat(Qt::PlainText);
    legend->setMargin(8);
    layout->addWidget(legend);
    rebuild();
}

ReceptiveFieldView::~ReceptiveFieldView() {
    if (!m_scale->layout()) delete m_scale;  // taken out of the plot's layout (showColourScale)
}

void ReceptiveFieldView::setResult(Run result) {
    m_result = std::move(result);
    m_query = -1;  // the last position of the new text
    m_bandsError.clear();
    if (m_bands && (!m_result || m_bands->folder != m_result->modelFolder || m_bands->text != m_result->input.text)) m_bands.reset();
    m_bandsAsked = false;
    rebuild();
    if (isVisible()) requestBandsOnce();
}

void ReceptiveFieldView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    requestBandsOnce();
}

void ReceptiveFieldView::requestBandsOnce() {
    // (asked only when the page is on screen: the pass keeps every layer's attention)
    if (m_bandsAsked || !m_layout || !m_result || m_result->modelFolder.empty() || m_bands) return;
    m_bandsAsked = true;
    Q_EMIT bandsRequested(QString::fromStdString(m_result->modelFolder), QString::fromStdString(m_result->input.text));
}

void ReceptiveFieldView::setModelBands(std::shared_ptr<const engine::ModelAttentionBands> bands) {
    if (!bands || !m_result || bands->folder != m_result->modelFolder || bands->text != m_result->input.text) return;
    m_bands = std::move(bands);
    m_bandsError.clear();
    rebuild();
}

void ReceptiveFieldView::setBandsFailed(const QString& message) {
    m_bandsError = message;
    rebuild();
}

void ReceptiveFieldView::setQuery(long long query) {
    if (query == m_query) return;
    m_query = query;
    rebuild();
}

void ReceptiveFieldView::setLayers(int layers) {
    if (layers == m_layers) return;
    m_layers = std::clamp(layers, 1, kMaxLayers);
    rebuild();
}

QString ReceptiveFieldView::message() const { return m_info->text(); }

double ReceptiveFieldView::memoryShare() const {
    if (!hasFlow() || !m_layout) return kNaN;
    const std::int64_t start = m_field->query / m_layout->segment * m_layout->segment;
    double share = 0;
    const auto& bottom = m_field->flow.back();
    for (std::int64_t j = 0; j < start; ++j) share += bottom[static_cast<std::size_t>(j)];
    return share;
}

void ReceptiveFieldView::onPlotClick(QMouseEvent* event) {
    if (!m_layout || event->button() != Qt::LeftButton) return;
    const double x = m_plot->xAxis->pixelToCoord(event->position().x());
    const long long position = std::llround(x);
    if (position >= 0 && position < m_layout->n) {
        const QSignalBlocker block(m_queryBox);
        m_queryBox->setValue(static_cast<int>(position));
        setQuery(position);
    }
}

void ReceptiveFieldView::showMessage(const QString& text) {
    m_field.reset();
    m_layout.reset();
    m_map->data()->clear();
    removeOutlines();
    replotWhenShown(m_plot);
    const QSignalBlocker block(m_queryBox);
    m_queryBox->setRange(0, 0);
    m_queryBox->setEnabled(false);
    m_info->setText(text);
}

void ReceptiveFieldView::showColourScale(bool show) {
    // (a hidden QCPColorScale still draws its gradient: take it out of the layout instead)
    QCPLayoutGrid* layout = m_plot->plotLayout();
    const bool shown = layout->hasElement(1, 1) && layout->element(1, 1) == m_scale;
    if (show == shown) return;
    if (show) {
        layout->addElement(1, 1, m_scale);
        m_scale->setVisible(true);
    } else {
        layout->take(m_scale);
        layout->simplify();
        m_scale->setVisible(false);
    }
}

void ReceptiveFieldView::removeOutlines() {
    m_plot->clearItems();
    for (int i = m_plot->plottableCount() - 1; i >= 0; --i)
        if (m_plot->plottable(i) != m_map) m_plot->removePlottable(i);
}

void ReceptiveFieldView::drawCone(const engine::ReceptiveField& field, const engine::SegmentLayout& layout) {
    removeOutlines();
    const QColor fg = m_plot->palette().color(QPalette::Text);
    // layer `layers − d` spans reach[d] … query; drawn as a staircase outline, bottom to top
    const auto outline = [&](const std::vector<std::int64_t>& reach, const QPen& pen, const QBrush& brush) {
        auto* curve = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
        QVector<double> xs, ys;
        const int layers = field.layers;
        for (int layer = 0; layer <= layers; ++layer) {  // left edge, going up
            const double left = static_cast<double>(reach[static_cast<std::size_t>(layers - layer)]) - 0.5;
            xs << left << left;
            ys << layer - 0.5 << layer + 0.5;
        }
        xs << field.query + 0.5 << field.query + 0.5;  // right edge, going down
        ys << layers + 0.5 << -0.5;
        xs << xs.front();
        ys << ys.front();
        curve->setData(xs, ys);
        curve->setPen(pen);
        curve->setBrush(brush);
        curve->setSelectable(QCP::stNone);
    };
    outline(field.reach, QPen(fg, 2), hasFlow() ? Qt::NoBrush : QBrush(QColor(70, 130, 180, 90)));
    outline(field.segmentReach, QPen(fg, 1.5, Qt::DashLine), Qt::NoBrush);
    // segment boundaries
    const std::int64_t lowest = field.reach.back();
    for (std::int64_t s = lowest / layout.segment + 1; s * layout.segment <= field.query; ++s) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->setPen(QPen(QColor(128, 128, 128), 1, Qt::DotLine));
        line->point1->setCoords(s * layout.segment - 0.5, 0);
        line->point2->setCoords(s * layout.segment - 0.5, 1);
    }
    auto* marker = new QCPItemText(m_plot);
    marker->setText(tr("query %1").arg(field.query));
    marker->setColor(fg);
    marker->setPositionAlignment(Qt::AlignRight | Qt::AlignVCenter);
    marker->setPadding(QMargins(0, 0, 6, 0));
    marker->position->setCoords(field.query - 0.5, field.layers);
}

void ReceptiveFieldView::rebuild() {
    if (!m_result) return showMessage(tr("No result yet."));
    const engine::AttentionResult* r =
        engine::resultForPage(*m_result, m_state ? m_state->resultIndex() : 0, engine::DiagnosticsPage::Memory);
    const auto resultLayout = r ? engine::readSegmentLayout(*r) : std::nullopt;
    if (!resultLayout)
        return showMessage(tr("The receptive field follows Transformer-XL's memory: choose transformer_xl and run."));
    const bool modelFlow = m_bands && m_bands->layout.n == resultLayout->n;
    m_layout = modelFlow ? m_bands->layout : *resultLayout;
    const long long n = m_layout->n;
    if (m_query < 0 || m_query >= n) m_query = n - 1;
    {
        const QSignalBlocker block(m_queryBox);
        m_queryBox->setEnabled(true);
        m_queryBox->setRange(0, static_cast<int>(std::min<long long>(n - 1, std::numeric_limits<int>::max())));
        m_queryBox->setValue(static_cast<int>(m_query));
        const QSignalBlocker blockLayers(m_layersBox);
        m_layersBox->setEnabled(!modelFlow);
        if (modelFlow) m_layersBox->setValue(static_cast<int>(m_bands->layers.size()));
    }
    auto field = modelFlow ? engine::receptiveField(*m_layout, m_query, m_bands->layers)
                           : engine::structuralReceptiveField(*m_layout, m_query, m_layers);
    if (!field) return showMessage(QString::fromStdString(field.error().message));
    m_field = field.value();
    const engine::ReceptiveField& f = *m_field;

    const std::int64_t lowest = std::min(f.reach.back(), f.segmentReach.back());
    const std::int64_t left = std::max<std::int64_t>(0, lowest - std::max<std::int64_t>(2, m_layout->segment / 4));
    const std::int64_t right = std::min<std::int64_t>(n - 1, m_query + std::max<std::int64_t>(2, m_layout->segment / 4));
    const int columns = static_cast<int>(right - left + 1), rows = f.layers + 1;
    m_map->data()->setSize(columns, rows);
    m_map->data()->setRange(QCPRange(static_cast<double>(left), static_cast<double>(right)), QCPRange(0, f.layers));
    double largest = 0;
    for (int row = 0; row < rows; ++row)
        for (int c = 0; c < columns; ++c) {
            double v = kNaN;
            if (hasFlow()) {
                const double flow = f.flow[static_cast<std::size_t>(f.layers - row)][static_cast<std::size_t>(left + c)];
                if (flow > 0) v = flow;
                largest = std::max(largest, flow);
            }
            m_map->data()->setCell(c, row, v);
        }
    showColourScale(hasFlow());  // a colour bar without flow would read as data
    if (hasFlow()) m_map->setDataRange(QCPRange(std::max(kFlowFloor * largest, 1e-12), std::max(largest, 1e-12)));
    drawCone(f, *m_layout);
    m_plot->xAxis->setRange(left - 0.5, right + 0.5);
    m_plot->yAxis->setRange(-0.5, f.layers + 0.5);
    replotWhenShown(m_plot);

    const std::int64_t bottom = f.reach.back(), ownSegment = f.segmentReach.back();
    QString text = tr("Query %1 at layer %2 is reached from positions %3–%1 of the input (%4 positions; L = %5, M = %6). "
                      "Without memory: %7–%1, its segment (%8).")
                       .arg(m_query)
                       .arg(f.layers)
                       .arg(bottom)
                       .arg(m_query - bottom + 1)
                       .arg(m_layout->segment)
                       .arg(m_layout->memory)
                       .arg(ownSegment)
                       .arg(m_query - ownSegment + 1);
    if (hasFlow())
        text += tr(" Rollout through the model's %1 layers: %2% of the query's state comes from before its segment.")
                    .arg(f.layers)
                    .arg(100.0 * memoryShare(), 0, 'f', 1);
    else if (!m_bandsError.isEmpty())
        text += tr(" No flow: %1").arg(m_bandsError);
    else if (!m_result->modelFolder.empty())
        text += tr(" Computing the model's attention for the flow…");
    else
        text += tr(" The cone is structural (random Q, K, V have no layers): open a Transformer-XL model (File → Open Model…, "
                   "samples/transfo-xl-moby) to see how much attention flows.");
    m_info->setText(text);
}

}  // namespace attnscope::views
