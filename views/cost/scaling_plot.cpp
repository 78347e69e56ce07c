#include "views/cost/scaling_plot.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"

#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLabel>
#include <QMap>
#include <QResizeEvent>
#include <QVBoxLayout>

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
    // No legend inside the axes (it hid the lines): the note under both plots is their legend.
    plot->legend->setVisible(false);
    plot->setMinimumHeight(150);
    return plot;
}

}  // namespace

QMap<double, QString> logTickLabels(double lo, double hi, int maxTicks) {
    QMap<double, QString> chosen;
    if (!(lo > 0) || !(hi > lo)) return chosen;
    // From the finest to the coarsest: multiples within a decade, then every k-th decade.
    struct Candidate {
        std::vector<double> multiples;
        int decadeStep;
    };
    static const std::vector<Candidate> candidates = {
        {{1, 1.2, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9}, 1}, {{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1},
        {{1, 2, 5}, 1}, {{1, 3}, 1}, {{1}, 1}, {{1}, 2}, {{1}, 3}, {{1}, 5}};
    const int first = static_cast<int>(std::floor(std::log10(lo))), last = static_cast<int>(std::ceil(std::log10(hi)));
    for (const Candidate& c : candidates) {
        QMap<double, QString> ticks;
        for (int e = first; e <= last; ++e) {
            if (e % c.decadeStep != 0) continue;
            for (double m : c.multiples) {
                const double v = m * std::pow(10.0, e);
                if (v >= lo && v <= hi) ticks.insert(v, QString::number(v, 'g', 3));
            }
        }
        chosen = ticks;
        if (ticks.size() <= std::max(2, maxTicks)) break;
    }
    return chosen;
}

namespace {

// Ticks that fit the axis's height: one text line and a half of room per label.
QSharedPointer<QCPAxisTickerText> logTicks(QCPAxis* axis) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int pixels = axis->axisRect()->height() > 20 ? axis->axisRect()->height() : axis->parentPlot()->height() - 60;
    const int maxTicks = static_cast<int>(pixels / (QFontMetricsF(axis->tickLabelFont()).height() * 1.5));
    ticker->setTicks(logTickLabels(axis->range().lower, axis->range().upper, maxTicks));
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
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* plots = new QHBoxLayout;
    m_timePlot = makeLogLogPlot(this, tr("attention time (s)"));
    m_memoryPlot = makeLogLogPlot(this, tr("peak memory (MiB)"));
    plots->addWidget(m_timePlot, 1);
    plots->addWidget(m_memoryPlot, 1);
    layout->addLayout(plots, 1);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("scalingSlopeNote"));
    m_note->setTextFormat(Qt::RichText);  // the series' colours; every text in it is escaped
    m_note->setWordWrap(true);
    m_note->setContentsMargins(6, 2, 6, 2);
    layout->addWidget(m_note);
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

QString ScalingPlot::slopeNote() const {
    QStringList lines;
    lines << tr("On log-log axes a line's slope is how its cost grows: 2 = as n² (every query scores every key), "
                "1 = as n.");
    for (const Series& s : m_series) {
        // One line per series, in its order (the window colours them as the plots' lines).
        const double time = timeSlope(s.id), memory = memorySlope(s.id);
        const auto slope = [](double v) { return std::isnan(v) ? QStringLiteral("—") : QString::number(v, 'f', 2); };
        QString line = tr("%1: time slope %2, memory slope %3.").arg(s.label, slope(time), slope(memory));
        // All n² scores but linear memory: the matrix is never held (why `full` reads about 1).
        if (!std::isnan(time) && !std::isnan(memory) && time >= 1.6 && memory < 1.4)
            line += tr(" It computes every score but a block of queries at a time, summed into the output and "
                       "dropped, so it never holds the n × n matrix: its memory grows with n (Q, K, V, the output and "
                       "per-row statistics). Storing the whole matrix, as a naive implementation does, would give 2.");
        lines << line;
    }
    return lines.join(QLatin1Char('\n'));
}

void ScalingPlot::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    updateValueTicks();
}

void ScalingPlot::updateValueTicks() {
    for (QCustomPlot* plot : {m_timePlot, m_memoryPlot}) {
        plot->yAxis->setTicker(logTicks(plot->yAxis));
        replotWhenShown(plot);
    }
}

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
    for (QCustomPlot* plot : {m_timePlot, m_memoryPlot})
        if (!lengths.isEmpty()) plot->xAxis->setTicker(lengthTicks(lengths));
    updateValueTicks();
    QStringList html;
    const QStringList lines = slopeNote().split(QLatin1Char('\n'));
    html << lines.front().toHtmlEscaped();
    for (int i = 1; i < lines.size(); ++i)
        html << QStringLiteral("<span style='color:%1'>&#9632;</span> %2")
                    .arg(CategoricalPalette::standard().color(i - 1).name(), lines[i].toHtmlEscaped());
    m_note->setText(html.join(QStringLiteral("<br>")));
}

}  // namespace attnscope::views
