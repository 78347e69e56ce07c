#include "views/diagnostics/memory_view.h"

#include <attnscope/diagnostics.h>
#include <attnscope/score_terms.h>

#include "views/data/colormap.h"
#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A segment is drawn whole up to these sizes; beyond, its first queries and their last keys.
constexpr long long kMaxQueries = 256;
constexpr long long kMaxKeys = 4096;

QString panelTitle(int panel) {
    switch (panel) {
    case 0: return QObject::tr("weights: softmax of a + b + c + d");
    case 1: return QObject::tr("(a) content  q·k");
    case 2: return QObject::tr("(b) content–position  q·r(i−j)");
    case 3: return QObject::tr("(c) global content bias  u·k");
    default: return QObject::tr("(d) global position bias  v·r(i−j)");
    }
}

QCustomPlot* makePanel(QWidget* parent, int panel) {
    auto* plot = new QCustomPlot(parent);
    styleDiagnosticPlot(plot);
    TitledColorMap parts = addTitledViridisMap(plot, panelTitle(panel));
    if (panel > 0) {
        parts.scale->setGradient(gradientFromLut(divergingColormap()));
        parts.map->setGradient(parts.scale->gradient());
    }
    styleDiagnosticAxis(parts.scale->axis(), plot->palette().color(QPalette::Text), plot->font());
    plot->xAxis->setLabel(QObject::tr("key position"));
    plot->yAxis->setLabel(QObject::tr("query position"));
    plot->yAxis->setRangeReversed(true);  // the segment's first query on top
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>(new QCPAxisTickerFixed);
        ticker->setTickStep(1.0);  // positions: whole numbers (1, 2, 5, 10 … apart)
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        axis->setTicker(ticker);
    }
    return plot;
}

QCPColorMap* mapOf(QCustomPlot* plot) { return static_cast<QCPColorMap*>(plot->plottable(0)); }

}  // namespace

MemoryView::MemoryView(QWidget* parent) : ResultPage(parent) {
    setFocusPolicy(Qt::StrongFocus);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(8, 4, 8, 2);
    auto* label = new QLabel(tr("&Segment"), this);
    m_segmentBox = new QSpinBox(this);
    m_segmentBox->setObjectName(QStringLiteral("memoryViewSegment"));
    m_segmentBox->setToolTip(tr("The query segment shown (] and [ step through them)"));
    label->setBuddy(m_segmentBox);
    connect(m_segmentBox, &QSpinBox::valueChanged, this, [this](int value) { showSegment(value); });
    m_info = new QLabel(this);
    m_info->setTextFormat(Qt::PlainText);
    m_info->setWordWrap(true);
    bar->addWidget(label);
    bar->addWidget(m_segmentBox);
    bar->addWidget(m_info, 1);
    layout->addLayout(bar);

    auto* grid = new QGridLayout;
    grid->setSpacing(4);
    for (int p = 0; p < kPanels; ++p) m_plots[static_cast<std::size_t>(p)] = makePanel(this, p);
    auto* legend = new QLabel(this);
    legend->setObjectName(QStringLiteral("memoryLegend"));
    legend->setWordWrap(true);
    legend->setTextFormat(Qt::PlainText);
    legend->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    legend->setMargin(8);
    legend->setText(tr("Transformer-XL reads the text in segments of L queries. Each query attends the memory — the M "
                       "positions before its segment, cached from the previous segments (the dashed box) — "
                       "and its own segment up to itself. The score is the sum of four terms "
                       "(Dai et al. 2019, §3.3), each divided by √d: (a) what the query's content asks of the key's, "
                       "(b) what it asks of the distance i − j, (c) a bias towards some keys whatever asks, (d) a "
                       "bias towards some distances. Terms share one colour scale; grey: not seen."));
    grid->addWidget(m_plots[0], 0, 0);
    grid->addWidget(m_plots[1], 0, 1);
    grid->addWidget(m_plots[2], 0, 2);
    grid->addWidget(legend, 1, 0);
    grid->addWidget(m_plots[3], 1, 1);
    grid->addWidget(m_plots[4], 1, 2);
    layout->addLayout(grid, 1);
    rebuild();
}

MemoryView::~MemoryView() = default;

void MemoryView::setResult(Run result) {
    m_result = std::move(result);
    m_segment = 1;  // the first segment with memory (clamped to the last one)
    rebuild();
}

void MemoryView::showSegment(int segment) {
    const int clamped = std::clamp(segment, 0, std::max(0, m_segments - 1));
    if (clamped == m_segment && m_head >= 0) return;
    m_segment = clamped;
    rebuild();
}

void MemoryView::keyPressEvent(QKeyEvent* event) {
    // (Page Up / Page Down step through the heads, window-wide)
    if (event->key() == Qt::Key_BracketRight || event->key() == Qt::Key_BracketLeft) {
        showSegment(m_segment + (event->key() == Qt::Key_BracketRight ? 1 : -1));
        return;
    }
    QWidget::keyPressEvent(event);
}

QString MemoryView::message() const { return m_info->text(); }

double MemoryView::cell(int panel, long long query, long long key) const {
    if (panel < 0 || panel >= kPanels || m_head < 0) return kNaN;
    QCPColorMapData* data = mapOf(m_plots[static_cast<std::size_t>(panel)])->data();
    const long long col = key - m_firstKey, row = query - m_firstQuery;
    if (row < 0 || col < 0 || col >= data->keySize() || row >= data->valueSize()) return kNaN;
    return data->cell(static_cast<int>(col), static_cast<int>(row));
}

void MemoryView::showMessage(const QString& text) {
    m_head = -1;
    m_segments = 0;
    m_firstQuery = m_firstKey = m_memoryKeys = 0;
    for (QCustomPlot* plot : m_plots) {
        mapOf(plot)->data()->clear();
        plot->clearItems();
        replotWhenShown(plot);
    }
    const QSignalBlocker block(m_segmentBox);
    m_segmentBox->setRange(0, 0);
    m_segmentBox->setEnabled(false);
    m_info->setText(text);
}

void MemoryView::drawMemoryRegion(QCustomPlot* plot, long long queries, long long keys) {
    plot->clearItems();
    const QColor fg = plot->palette().color(QPalette::Text);
    const double top = m_firstQuery - 0.5, bottom = m_firstQuery + queries - 0.5;
    const double boundary = m_firstKey + m_memoryKeys - 0.5;
    if (m_memoryKeys > 0) {
        auto* box = new QCPItemRect(plot);
        box->setPen(QPen(fg, 1.5, Qt::DashLine));
        box->setBrush(QBrush(QColor(128, 128, 128, 40)));
        box->topLeft->setCoords(m_firstKey - 0.5, top);
        box->bottomRight->setCoords(boundary, bottom);
        auto* text = new QCPItemText(plot);
        text->setText(tr("memory"));
        text->setColor(fg);
        text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
        text->setClipToAxisRect(false);
        text->position->setCoords((m_firstKey - 0.5 + boundary) / 2, top);
    }
    auto* line = new QCPItemStraightLine(plot);
    line->setPen(QPen(fg, 2));
    line->point1->setCoords(boundary, 0);
    line->point2->setCoords(boundary, 1);
    auto* text = new QCPItemText(plot);
    text->setText(tr("segment"));
    text->setColor(fg);
    text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
    text->position->setCoords((boundary + m_firstKey + keys - 0.5) / 2, top);
}

void MemoryView::rebuild() {
    if (!m_result) return showMessage(tr("No result yet."));
    const engine::AttentionResult* r =
        engine::resultForPage(*m_result, m_state ? m_state->resultIndex() : 0, engine::DiagnosticsPage::Memory);
    if (!r) return showMessage(tr("The memory view shows Transformer-XL's segments: choose transformer_xl and run."));
    const auto layout = engine::readSegmentLayout(*r);
    if (!layout || !r->weights) return showMessage(tr("This result cannot be drawn: its parameters or weights are missing."));
    const std::size_t index = static_cast<std::size_t>(r - m_result->results.data());
    m_segments = static_cast<int>(std::min<long long>(layout->segments(), std::numeric_limits<int>::max()));
    m_segment = std::clamp(m_segment, 0, std::max(0, m_segments - 1));
    m_head = std::clamp(m_state ? m_state->head() : 0, 0, static_cast<int>(r->heads) - 1);
    {
        const QSignalBlocker block(m_segmentBox);
        m_segmentBox->setEnabled(true);
        m_segmentBox->setRange(0, std::max(0, m_segments - 1));
        m_segmentBox->setValue(m_segment);
        m_segmentBox->setSuffix(tr(" of %1").arg(m_segments - 1));
    }

    const long long start = layout->segmentStart(m_segment), end = layout->segmentEnd(m_segment);
    const long long queries = std::min(end - start, kMaxQueries);
    const long long keyEnd = start + queries;
    m_firstQuery = start;
    m_firstKey = std::max<long long>(layout->firstKey(start), keyEnd - kMaxKeys);
    m_memoryKeys = start - m_firstKey;
    const long long keys = keyEnd - m_firstKey;
    auto terms = engine::transformerXlScoreTerms(*m_result, index, m_head, start, keyEnd, m_firstKey, keyEnd);
    if (!terms) return showMessage(QString::fromStdString(terms.error().message));
    const engine::WeightTile weights = r->weights->tile(m_head, start, keyEnd, m_firstKey, keyEnd);

    const std::vector<float>* sources[] = {&weights.weights, &terms->content, &terms->contentPosition,
                                           &terms->globalContent, &terms->globalPosition};
    double largest = 0, heaviest = 0;
    for (int p = 1; p < kPanels; ++p)
        for (float v : *sources[p])
            if (std::isfinite(v)) largest = std::max(largest, std::abs(static_cast<double>(v)));
    for (float v : weights.weights) heaviest = std::max(heaviest, static_cast<double>(v));
    for (int p = 0; p < kPanels; ++p) {
        QCustomPlot* plot = m_plots[static_cast<std::size_t>(p)];
        QCPColorMap* map = mapOf(plot);
        map->data()->setSize(static_cast<int>(keys), static_cast<int>(queries));
        map->data()->setRange(QCPRange(m_firstKey, keyEnd - 1), QCPRange(start, keyEnd - 1));
        for (long long a = 0; a < queries; ++a) {
            const long long i = start + a, first = layout->firstKey(i);
            for (long long t = 0; t < keys; ++t) {
                const long long j = m_firstKey + t;
                const float v = (*sources[p])[static_cast<std::size_t>(a * keys + t)];
                map->data()->setCell(static_cast<int>(t), static_cast<int>(a), j < first || j > i ? kNaN : v);
            }
        }
        map->setDataRange(p == 0 ? QCPRange(0, std::max(heaviest, 1e-6)) : QCPRange(-std::max(largest, 1e-6), std::max(largest, 1e-6)));
        plot->xAxis->setRange(m_firstKey - 0.5, keyEnd - 0.5);
        plot->yAxis->setRange(start - 0.5, keyEnd - 0.5);
        drawMemoryRegion(plot, queries, keys);
        replotWhenShown(plot);
    }

    QString text = tr("Head %1, segment %2: queries %3–%4 see %5 memory keys (%6–%7) and their own segment. L = %8, M = %9%10.")
                       .arg(m_head)
                       .arg(m_segment)
                       .arg(start)
                       .arg(end - 1)
                       .arg(m_memoryKeys)
                       .arg(m_firstKey)
                       .arg(start - 1)
                       .arg(layout->segment)
                       .arg(layout->memory)
                       .arg(layout->sameLength ? tr(", same_length: each query sees its last M keys") : QString());
    if (m_memoryKeys == 0) text = tr("Head %1, segment %2: queries %3–%4, no memory yet (the first segment, or M = 0). L = %5, M = %6.")
                                      .arg(m_head).arg(m_segment).arg(start).arg(end - 1).arg(layout->segment).arg(layout->memory);
    if (!layout->relative) text += tr(" Relative positions off: (b), (c), (d) are 0.");
    if (queries < end - start) text += tr(" Showing its first %1 queries.").arg(queries);
    m_info->setText(text);
}

}  // namespace attnscope::views
