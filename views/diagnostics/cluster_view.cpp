#include "views/diagnostics/cluster_view.h"

#include <attnscope/diagnostics.h>

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <variant>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxListedUnrouted = 40;

QCPColorMap* mapOf(QCustomPlot* plot) { return static_cast<QCPColorMap*>(plot->plottable(0)); }
QCPBars* barsOf(QCustomPlot* plot, int side) { return static_cast<QCPBars*>(plot->plottable(side)); }

QVector<double> barValues(const QCPBars* bars) {
    QVector<double> out;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) out << it->value;
    return out;
}

}  // namespace

ClusterView::ClusterView(QWidget* parent) : ResultPage(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* top = new QHBoxLayout;
    top->setContentsMargins(8, 4, 8, 2);
    m_info = new QLabel(this);
    m_info->setTextFormat(Qt::PlainText);
    m_info->setWordWrap(true);
    top->addWidget(m_info, 1);
    top->addWidget(new QLabel(tr("Step:"), this));
    m_stepCombo = new QComboBox(this);
    m_stepCombo->setToolTip(tr("k-means iteration t assigns tokens to the centroids after t updates; "
                               "“final” is the routing that attention used"));
    top->addWidget(m_stepCombo);
    layout->addLayout(top);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    m_barsPlot = new QCustomPlot(splitter);
    styleDiagnosticPlot(m_barsPlot);
    auto* queries = new QCPBars(m_barsPlot->xAxis, m_barsPlot->yAxis);
    auto* keys = new QCPBars(m_barsPlot->xAxis, m_barsPlot->yAxis);
    auto* group = new QCPBarsGroup(m_barsPlot);
    queries->setName(tr("queries"));
    keys->setName(tr("keys"));
    queries->setBrush(QColor(31, 119, 180));
    keys->setBrush(QColor(255, 127, 14));
    for (QCPBars* bars : {queries, keys}) {
        bars->setPen(Qt::NoPen);
        bars->setWidth(0.4);
        bars->setBarsGroup(group);
    }
    m_barsPlot->xAxis->setLabel(tr("cluster"));
    m_barsPlot->yAxis->setLabel(tr("tokens assigned"));
    m_barsPlot->legend->setVisible(true);
    m_stripPlot = new QCustomPlot(splitter);
    styleDiagnosticPlot(m_stripPlot);
    auto* strip = new QCPColorMap(m_stripPlot->xAxis, m_stripPlot->yAxis);
    strip->setInterpolate(false);
    strip->setTightBoundary(false);  // whole cells at the edges (true halves the first and last)
    m_stripPlot->xAxis->setLabel(tr("token (colour = cluster; blank = unrouted query)"));
    m_stripPlot->yAxis->setRangeReversed(true);
    auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    ticker->addTick(Queries, tr("queries"));
    ticker->addTick(Keys, tr("keys"));
    m_stripPlot->yAxis->setTicker(ticker);
    m_stripPlot->yAxis->setSubTicks(false);
    m_stripPlot->yAxis->setRange(-0.5, 1.5);
    m_stripPlot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_stripPlot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_stripPlot->axisRect()->setRangeDrag(Qt::Horizontal);
    splitter->addWidget(m_barsPlot);
    splitter->addWidget(m_stripPlot);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    layout->addWidget(splitter, 1);
    m_summary = new QLabel(this);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    m_summary->setContentsMargins(8, 2, 8, 4);
    auto* summaryRow = new QHBoxLayout;
    summaryRow->setContentsMargins(0, 0, 8, 4);
    summaryRow->addWidget(m_summary, 1);
    m_suggest = new QPushButton(this);
    m_suggest->setProperty("attnscopeExportSkip", true);  // a control, not part of a figure
    m_suggest->hide();
    connect(m_suggest, &QPushButton::clicked, this, [this] { Q_EMIT settingSuggested(QStringLiteral("routing"), m_suggestion); });
    summaryRow->addWidget(m_suggest, 0, Qt::AlignTop);
    layout->addLayout(summaryRow);
    connect(m_stepCombo, &QComboBox::currentIndexChanged, this, &ClusterView::updateStep);
    rebuild();
}

ClusterView::~ClusterView() = default;

void ClusterView::setStep(int step) { m_stepCombo->setCurrentIndex(step); }
int ClusterView::step() const { return m_stepCombo->currentIndex(); }
int ClusterView::stepCount() const { return m_stepCombo->count(); }

const engine::AttentionResult* ClusterView::chosenResult() const {
    if (!m_result) return nullptr;
    return engine::resultForPage(*m_result, m_state ? m_state->resultIndex() : 0, engine::DiagnosticsPage::Clusters);
}

void ClusterView::showMessage(const QString& text) {
    m_suggest->hide();
    m_shownHead = -1;
    m_clusters = m_iterations = m_n = 0;
    m_unrouted.clear();
    {
        const QSignalBlocker block(m_stepCombo);
        m_stepCombo->clear();
    }
    for (int side : {Queries, Keys}) barsOf(m_barsPlot, side)->data()->clear();
    mapOf(m_stripPlot)->data()->clear();
    replotWhenShown(m_barsPlot);
    replotWhenShown(m_stripPlot);
    m_summary->clear();
    m_info->setText(text);
}

void ClusterView::rebuild() {
    if (!m_result) return showMessage(tr("No result yet."));
    const engine::AttentionResult* r = chosenResult();
    if (!r) return showMessage(tr("The cluster view shows Routing attention's k-means: choose the routing variant and run."));
    const auto kmeans = engine::readClusters(*r);
    if (!kmeans)
        return showMessage(tr("This %1 result has no stored k-means assignments.").arg(QString::fromStdString(r->variantId)));
    const engine::PlainTensor* assignments = kmeans->assignments;
    const engine::PlainTensor* nearest = kmeans->nearest;
    const engine::PlainTensor* centroids = kmeans->centroids;
    const int heads = static_cast<int>(assignments->shape[0]);
    const int head = std::clamp(m_state ? m_state->head() : 0, 0, heads - 1);
    const bool headChanged = head != m_shownHead;
    m_shownHead = head;
    m_iterations = static_cast<int>(assignments->shape[1]);
    m_n = static_cast<int>(assignments->shape[3]);
    m_clusters = static_cast<int>(centroids->shape[1]);
    m_unrouted.clear();
    if (const engine::PlainTensor* routed = kmeans->routedCount)
        for (int t = 0; t < m_n && static_cast<std::size_t>(head) * m_n + t < routed->i64.size(); ++t)
            if (routed->i64[static_cast<std::size_t>(head) * m_n + t] == 0) m_unrouted << t;
    const int steps = m_iterations + (nearest ? 1 : 0);
    if (headChanged || m_stepCombo->count() != steps) {
        const QSignalBlocker block(m_stepCombo);
        const int keep = m_stepCombo->currentIndex();
        m_stepCombo->clear();
        for (int it = 0; it < m_iterations; ++it) m_stepCombo->addItem(tr("k-means iteration %1").arg(it + 1));
        if (nearest) m_stepCombo->addItem(tr("final routing"));
        m_stepCombo->setCurrentIndex(keep >= 0 && keep < steps && !headChanged ? keep : steps - 1);
    }
    QString mode;
    if (const auto it = r->params.find("mode"); it != r->params.end())
        if (const auto* s = std::get_if<std::string>(&it->second)) mode = QString::fromStdString(*s);
    m_info->setText(tr("routing (%1), head %2: %3 clusters over %4 tokens, %5 k-means iterations; centroids [%6 × %7 × %8]")
                        .arg(mode.isEmpty() ? tr("topw") : mode)
                        .arg(head)
                        .arg(m_clusters)
                        .arg(m_n)
                        .arg(m_iterations)
                        .arg(centroids->shape[0])
                        .arg(centroids->shape[1])
                        .arg(centroids->shape[2]));
    updateStep();
}

void ClusterView::updateStep() {
    const engine::AttentionResult* r = chosenResult();
    if (!r || m_shownHead < 0) return;
    const int step = m_stepCombo->currentIndex();
    const bool lastStep = step >= m_iterations;
    const auto kmeans = engine::readClusters(*r);
    const engine::PlainTensor* source = !kmeans ? nullptr : lastStep ? kmeans->nearest : kmeans->assignments;
    if (!source) return;
    // ids: [2, n] for this head and step (row 0 queries, row 1 keys)
    const std::size_t offset = lastStep ? static_cast<std::size_t>(m_shownHead) * 2 * m_n
                                     : (static_cast<std::size_t>(m_shownHead) * m_iterations + step) * 2 * m_n;
    const std::int64_t* ids = source->i64.data() + offset;
    QVector<double> clusterIds(m_clusters), sizes[2] = {QVector<double>(m_clusters, 0.0), QVector<double>(m_clusters, 0.0)};
    for (int c = 0; c < m_clusters; ++c) clusterIds[c] = c;
    QCPColorMap* strip = mapOf(m_stripPlot);
    strip->data()->setSize(m_n, 2);
    strip->data()->setRange(QCPRange(0, std::max(m_n - 1, 1)), QCPRange(0, 1));
    for (int side : {Queries, Keys})
        for (int t = 0; t < m_n; ++t) {
            const std::int64_t c = ids[static_cast<std::size_t>(side) * m_n + t];
            if (c >= 0 && c < m_clusters) sizes[side][static_cast<int>(c)] += 1;
            const bool unrouted = lastStep && side == Queries && m_unrouted.contains(t);
            strip->data()->setCell(t, side, unrouted ? kNaN : static_cast<double>(c));
        }
    for (int side : {Queries, Keys}) barsOf(m_barsPlot, side)->setData(clusterIds, sizes[side], true);
    strip->setGradient(categoricalGradient(CategoricalPalette::standard(), m_clusters));
    strip->setDataRange(QCPRange(0, std::max(1, m_clusters - 1)));
    m_stripPlot->xAxis->setRange(-0.5, m_n - 0.5);
    m_barsPlot->xAxis->setRange(-0.7, m_clusters - 0.3);
    double top = 0;
    for (const auto& s : sizes) top = std::max(top, s.isEmpty() ? 0.0 : *std::max_element(s.begin(), s.end()));
    m_barsPlot->yAxis->setRange(0, top * 1.1 + 1);
    replotWhenShown(m_barsPlot);
    replotWhenShown(m_stripPlot);

    m_suggest->hide();
    QString text = tr("%1: largest cluster %2 queries / %3 keys, %4 empty clusters (queries).")
                       .arg(m_stepCombo->currentText())
                       .arg(*std::max_element(sizes[Queries].begin(), sizes[Queries].end()))
                       .arg(*std::max_element(sizes[Keys].begin(), sizes[Keys].end()))
                       .arg(std::count(sizes[Queries].begin(), sizes[Queries].end(), 0.0));
    if (lastStep) {
        if (m_unrouted.isEmpty()) {
            text += QLatin1Char(' ') + tr("Every query was routed to at least one cluster.");
        } else {
            QStringList listed;
            for (int i = 0; i < m_unrouted.size() && i < kMaxListedUnrouted; ++i) listed << QString::number(m_unrouted[i]);
            if (m_unrouted.size() > kMaxListedUnrouted) listed << QStringLiteral("…");
            text += QLatin1Char(' ') + tr("%1 queries unrouted (no cluster took them; output 0, blank on the strip): %2.")
                                           .arg(m_unrouted.size())
                                           .arg(listed.join(QStringLiteral(", ")));
            // Why: each cluster picks its own w nearest queries, independently of the others.
            if (const engine::AttentionResult* r = chosenResult()) {
                const auto param = [&](const char* name) {
                    const auto it = r->params.find(name);
                    return it != r->params.end() && std::holds_alternative<std::int64_t>(it->second) ? std::get<std::int64_t>(it->second) : 0;
                };
                const std::int64_t window = param("window_size") > 0 ? param("window_size") : (m_n + m_clusters - 1) / std::max(1, m_clusters);
                text += QLatin1Char(' ') +
                        tr("Why: in balanced top-w routing each of the %1 clusters takes its own %2 nearest queries (%3 "
                           "slots for %4 queries, per head), so a query near two centroids is taken twice and one near "
                           "none is left out. A larger window_size (e.g. %5) routes more of them; mode = argmax routes every "
                           "query to its nearest centroid (the paper's rule).")
                            .arg(m_clusters)
                            .arg(window)
                            .arg(static_cast<long long>(m_clusters) * window)
                            .arg(m_n)
                            .arg(2 * window);
                m_suggestion = QStringLiteral("window_size=%1").arg(2 * window);
                m_suggest->setText(tr("Try window_size = %1").arg(2 * window));
                m_suggest->setToolTip(tr("Runs routing again with window_size = %1 (the other parameters as they are)").arg(2 * window));
                m_suggest->show();
            }
        }
    }
    m_summary->setText(text);
}

QVector<double> ClusterView::clusterSizes(Side side) const { return barValues(barsOf(m_barsPlot, side)); }

double ClusterView::stripCell(Side side, int token) const {
    QCPColorMapData* data = mapOf(m_stripPlot)->data();
    if (token < 0 || token >= data->keySize() || data->valueSize() < 2) return kNaN;
    return data->cell(token, side);
}

QString ClusterView::summary() const { return m_summary->text(); }
QString ClusterView::message() const { return m_shownHead < 0 ? m_info->text() : QString(); }

}  // namespace attnscope::views
