#include "views/scaling_plot.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/plot_style.h"
#include "views/qcp.h"

#include <QHBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

double logLogSlope(const std::vector<double>& x, const std::vector<double>& y) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int count = 0;
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
        if (!(x[i] > 0) || !(y[i] > 0)) continue;  // log undefined (and skips NaN)
        const double lx = std::log(x[i]), ly = std::log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
        ++count;
    }
    const double denominator = count * sxx - sx * sx;
    if (count < 2 || denominator <= 0) return std::numeric_limits<double>::quiet_NaN();
    return (count * sxy - sx * sy) / denominator;
}

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QCustomPlot* makeLogLogPlot(QWidget* parent, const QString& yLabel) {
    auto* plot = new QCustomPlot(parent);
    styleDiagnosticPlot(plot);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        axis->setNumberFormat(QStringLiteral("gb"));
        axis->setNumberPrecision(0);
    }
    plot->xAxis->setLabel(QObject::tr("sequence length n"));
    plot->yAxis->setLabel(yLabel);
    plot->legend->setVisible(true);
    plot->legend->setFont(plot->font());
    plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    plot->setMinimumHeight(160);
    return plot;
}

// Ticks at 1, 2 and 5 times the powers of ten inside [lo, hi], finer steps when that gives fewer
// than three, as plain numbers: QCustomPlot's log ticker labels sub-decade ticks with too few
// digits ("1", "1").
QSharedPointer<QCPAxisTickerText> logTicks(double lo, double hi) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    if (!(lo > 0) || !(hi > lo)) return ticker;
    static const std::vector<std::vector<double>> steps = {
        {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1.2, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9}};
    for (const auto& multiples : steps) {
        QMap<double, QString> ticks;
        for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
            for (double m : multiples) {
                const double v = m * std::pow(10.0, e);
                if (v >= lo && v <= hi) ticks.insert(v, QString::number(v, 'g', 3));
            }
        ticker->setTicks(ticks);
        if (ticks.size() >= 3) break;
    }
    return ticker;
}

// Ticks at the measured lengths: "1024", "4k", "16k" (a power-of-two n in thousands of 1024).
QSharedPointer<QCPAxisTickerText> lengthTicks(const QVector<double>& lengths) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (double n : lengths) {
        const auto v = static_cast<std::int64_t>(n);
        const QString label = v >= 2048 && v % 1024 == 0 ? QStringLiteral("%1k").arg(v / 1024) : QString::number(v);
        ticker->addTick(n, label);
    }
    return ticker;
}

QString slopeText(double slope) {
    return std::isnan(slope) ? QObject::tr("slope —") : QObject::tr("slope %1").arg(slope, 0, 'f', 2);
}

}  // namespace

ScalingPlot::ScalingPlot(QWidget* parent) : QWidget(parent) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_timePlot = makeLogLogPlot(this, tr("attention time (s)"));
    m_memoryPlot = makeLogLogPlot(this, tr("peak memory (MiB)"));
    layout->addWidget(m_timePlot, 1);
    layout->addWidget(m_memoryPlot, 1);
    redraw();
}

ScalingPlot::~ScalingPlot() = default;

void ScalingPlot::setTimeLabel(const QString& label) {
    m_timePlot->yAxis->setLabel(label);
    replotWhenShown(m_timePlot);
}

void ScalingPlot::clear() {
    m_series.clear();
    m_skipped.clear();
    redraw();
}

void ScalingPlot::addPoint(const ScalingPoint& point) {
    if (point.skipped) {
        m_skipped << tr("%1, n = %2: %3").arg(point.label).arg(point.n).arg(point.message);
        return;
    }
    auto it = std::find_if(m_series.begin(), m_series.end(), [&](const Series& s) { return s.id == point.variantId; });
    if (it == m_series.end()) {
        m_series.push_back({point.variantId, point.label, {}});
        it = m_series.end() - 1;
    }
    it->points.push_back(point);
    redraw();
}

const ScalingPlot::Series* ScalingPlot::find(const QString& id) const {
    for (const Series& s : m_series)
        if (s.id == id) return &s;
    return nullptr;
}

QStringList ScalingPlot::variantIds() const {
    QStringList ids;
    for (const Series& s : m_series) ids << s.id;
    return ids;
}

QVector<ScalingPoint> ScalingPlot::points(const QString& id) const {
    const Series* s = find(id);
    return s ? s->points : QVector<ScalingPoint>{};
}

double ScalingPlot::timeSlope(const QString& id) const {
    std::vector<double> x, y;
    for (const ScalingPoint& p : points(id)) {
        x.push_back(static_cast<double>(p.n));
        y.push_back(p.seconds);
    }
    return logLogSlope(x, y);
}

double ScalingPlot::memorySlope(const QString& id) const {
    std::vector<double> x, y;
    for (const ScalingPoint& p : points(id)) {
        x.push_back(static_cast<double>(p.n));
        y.push_back(static_cast<double>(p.peakBytes));
    }
    return logLogSlope(x, y);
}

QString ScalingPlot::timeLegend(const QString& id) const {
    const Series* s = find(id);
    return s ? QStringLiteral("%1 (%2)").arg(s->label, slopeText(timeSlope(id))) : QString();
}

QStringList ScalingPlot::skippedText() const { return m_skipped; }

void ScalingPlot::redraw() {
    for (QCustomPlot* plot : {m_timePlot, m_memoryPlot}) plot->clearGraphs();
    double nLo = std::numeric_limits<double>::max(), nHi = 0;
    double tLo = std::numeric_limits<double>::max(), tHi = 0;
    double mLo = std::numeric_limits<double>::max(), mHi = 0;
    QVector<double> lengths;
    for (int i = 0; i < m_series.size(); ++i) {
        const Series& s = m_series[i];
        const QColor color = CategoricalPalette::standard().color(i);
        QCPGraph* time = m_timePlot->addGraph();
        QCPGraph* memory = m_memoryPlot->addGraph();
        time->setName(timeLegend(s.id));
        memory->setName(QStringLiteral("%1 (%2)").arg(s.label, slopeText(memorySlope(s.id))));
        for (QCPGraph* g : {time, memory}) {
            g->setPen(QPen(color, 2));
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 6));
        }
        for (const ScalingPoint& p : s.points) {
            const auto n = static_cast<double>(p.n);
            // Log axes cannot show 0: a run too fast to time or using no buffer is left out.
            if (p.seconds > 0) time->addData(n, p.seconds);
            if (p.peakBytes > 0) memory->addData(n, static_cast<double>(p.peakBytes) / kMiB);
            nLo = std::min(nLo, n);
            nHi = std::max(nHi, n);
            if (p.seconds > 0) tLo = std::min(tLo, p.seconds), tHi = std::max(tHi, p.seconds);
            if (p.peakBytes > 0)
                mLo = std::min(mLo, static_cast<double>(p.peakBytes) / kMiB), mHi = std::max(mHi, static_cast<double>(p.peakBytes) / kMiB);
            if (!lengths.contains(n)) lengths.push_back(n);
        }
    }
    const auto setRange = [](QCPAxis* axis, double lo, double hi, double fallbackLo, double fallbackHi) {
        if (hi <= 0 || lo > hi) axis->setRange(fallbackLo, fallbackHi);
        else axis->setRange(lo / 1.5, hi * 1.5);
    };
    setRange(m_timePlot->xAxis, nLo, nHi, 128, 16384);
    setRange(m_memoryPlot->xAxis, nLo, nHi, 128, 16384);
    setRange(m_timePlot->yAxis, tLo, tHi, 1e-4, 10);
    setRange(m_memoryPlot->yAxis, mLo, mHi, 0.01, 1e4);
    std::sort(lengths.begin(), lengths.end());
    for (QCustomPlot* plot : {m_timePlot, m_memoryPlot}) {
        if (!lengths.isEmpty()) plot->xAxis->setTicker(lengthTicks(lengths));
        plot->yAxis->setTicker(logTicks(plot->yAxis->range().lower, plot->yAxis->range().upper));
    }
    for (QCustomPlot* plot : {m_timePlot, m_memoryPlot}) {
        plot->legend->setVisible(plot->graphCount() > 0);
        replotWhenShown(plot);
    }
}

}  // namespace attnscope::views
