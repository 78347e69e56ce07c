#include "views/diagnostics/star_reach_view.h"

#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"
#include "views/data/token_label.h"

#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

constexpr double kFloor = 1e-4;  // shares below this of the largest are drawn at the scale's bottom
constexpr int kMaxTokenTicks = 48;  // token text on the axes up to this many tokens; indices beyond

}  // namespace

StarReachView::StarReachView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_info = new QLabel(this);
    m_info->setTextFormat(Qt::PlainText);
    m_info->setWordWrap(true);
    m_info->setMargin(6);
    layout->addWidget(m_info);
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    TitledColorMap parts = addTitledViridisMap(m_plot, tr("Share of each node's state from each input"));
    m_map = parts.map;
    parts.scale->setDataScaleType(QCPAxis::stLogarithmic);
    parts.scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    parts.scale->axis()->setLabel(tr("share"));
    styleDiagnosticAxis(parts.scale->axis(), m_plot->palette().color(QPalette::Text), m_plot->font());
    m_plot->xAxis->setLabel(tr("input token j"));
    m_plot->yAxis->setLabel(tr("node i"));
    m_plot->yAxis->setRangeReversed(true);
    layout->addWidget(m_plot, 1);
    auto* legend = new QLabel(tr("Attention flow through the cycles, heads averaged (as rollout follows layers): each "
                                 "node takes its neighbours', its own and the relay's shares in proportion to its "
                                 "weights on them, and the relay takes the nodes'. Inputs farther than t ring steps "
                                 "can only arrive through the relay; the relay starts as the mean of all inputs."),
                              this);
    legend->setWordWrap(true);
    legend->setTextFormat(Qt::PlainText);
    legend->setMargin(6);
    layout->addWidget(legend);
    rebuild();
}

void StarReachView::setPass(std::shared_ptr<const engine::StarPass> pass) {
    m_pass = std::move(pass);
    m_reach.reset();
    if (m_pass) {
        auto reach = engine::starReach(*m_pass);
        if (reach) m_reach = std::move(reach.value());
    }
    rebuild();
}

void StarReachView::setCycle(int cycle) {
    if (cycle == m_cycle) return;
    m_cycle = cycle;
    rebuild();
}

QString StarReachView::message() const { return m_info->text(); }

double StarReachView::cell(long long node, long long input) const {
    if (!m_reach || node < 0 || input < 0 || node >= m_reach->n || input >= m_reach->n) return std::numeric_limits<double>::quiet_NaN();
    return m_reach->at(std::clamp<long long>(m_cycle, 0, m_reach->cycles), node, input);
}

void StarReachView::drawRingBand(const engine::StarReach& r, int t) {
    // the inputs within t ring steps of each node: what the ring alone could have carried
    for (int i = m_plot->plottableCount() - 1; i >= 0; --i)
        if (m_plot->plottable(i) != m_map) m_plot->removePlottable(i);
    const QColor fg = m_plot->palette().color(QPalette::Text);
    const auto edge = [&](int sign) {
        auto* curve = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
        QVector<double> xs, ys;
        for (std::int64_t i = 0; i < r.n; ++i) {
            // left edge: the first input within reach, less half a cell; right edge: the last, plus half
            const double x = sign < 0 ? static_cast<double>(std::max<std::int64_t>(i - t, 0)) - 0.5
                                      : static_cast<double>(std::min<std::int64_t>(i + t, r.n - 1)) + 0.5;
            xs << x << x;
            ys << i - 0.5 << i + 0.5;
        }
        curve->setData(xs, ys);
        curve->setPen(QPen(fg, 1.5, Qt::DashLine));
        curve->setSelectable(QCP::stNone);
        curve->setName(sign < 0 ? tr("within %1 ring steps").arg(t) : QString());
    };
    if (t > 0 && !r.cyclic) {
        edge(-1);
        edge(+1);
    }
}

void StarReachView::rebuild() {
    if (!m_reach) {
        m_map->data()->clear();
        m_info->setText(tr("No cycles yet: choose star and run."));
        replotWhenShown(m_plot);
        return;
    }
    const engine::StarReach& r = *m_reach;
    const int t = std::clamp(m_cycle, 0, static_cast<int>(r.cycles));
    const int n = static_cast<int>(r.n);
    m_map->data()->setSize(n, n);
    m_map->data()->setRange(QCPRange(0, n - 1), QCPRange(0, n - 1));
    double largest = 0, ring = 0, far = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            const double v = r.at(t, i, j);
            largest = std::max(largest, v);
            (r.ringDistance(i, j) <= t ? ring : far) += v;
            m_map->data()->setCell(j, i, v > 0 ? v : std::numeric_limits<double>::quiet_NaN());
        }
    m_ringShare = ring / n;
    m_farShare = far / n;
    m_map->setDataRange(QCPRange(std::max(kFloor * largest, 1e-12), std::max(largest, 1e-12)));
    m_plot->xAxis->setRange(-0.5, n - 0.5);
    m_plot->yAxis->setRange(-0.5, n - 0.5);
    drawRingBand(r, t);
    if (n <= kMaxTokenTicks && static_cast<int>(m_pass->input.tokens.size()) == n) {
        auto ticks = QSharedPointer<QCPAxisTickerText>::create();
        for (int i = 0; i < n; ++i) ticks->addTick(i, tokenLabel(m_pass->input.tokens[static_cast<std::size_t>(i)].text, 10));
        m_plot->xAxis->setTicker(ticks);
        m_plot->yAxis->setTicker(ticks);
        m_plot->xAxis->setTickLabelRotation(n > 16 ? 60 : 0);
    } else {
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    replotWhenShown(m_plot);
    m_info->setText(tr("After cycle %1 of %2: a node draws on average %3 % of its state from inputs within %1 ring "
                       "step(s) and %4 % from farther inputs, which only the relay carries%5.")
                        .arg(t)
                        .arg(r.cycles)
                        .arg(100 * m_ringShare, 0, 'f', 1)
                        .arg(100 * m_farShare, 0, 'f', 1)
                        .arg(r.cyclic ? QString() : tr(" (the open ring's phantom ends take the rest)")));
}

}  // namespace attnscope::views
