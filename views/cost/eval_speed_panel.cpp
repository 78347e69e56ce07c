#include "views/cost/eval_speed_panel.h"

#include "views/widgets/measure_controls.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {

QString paperNote() {
    return QObject::tr(
        "Transformer-XL reuses the states it cached for the previous segment, so each new token costs one "
        "segment's attention over the memory. A vanilla Transformer with the same attention length recomputes "
        "the whole window for every token it predicts: its cost per token grows as length² against the "
        "cached model's length. The paper (Dai et al. 2019, Table 9) measured 363× at attention length 800 up "
        "to 1,874× at 3,800, on a GPU with its full-size models. Here both run on this machine's CPU through "
        "AttnScope's own forward pass: a 4-layer model (d_model 128, 4 heads of 32, random weights), segments "
        "of 16 with memory = the attention length, against windows of that length recomputed per token.");
}

QSharedPointer<QCPAxisTickerText> lengthTicks(const QVector<EvalSpeedSample>& samples) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (const auto& s : samples) ticker->addTick(s.length, QString::number(s.length));
    return ticker;
}

// Ticks at 1, 2 and 5 times the powers of ten inside [lo, hi], as plain numbers ("20×"): a log
// ticker gives a ratio axis spanning less than two decades a single label.
QSharedPointer<QCPAxisTickerText> ratioTicks(double lo, double hi) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    if (!(lo > 0) || !(hi > lo)) return ticker;
    for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
        for (double m : {1.0, 2.0, 5.0}) {
            const double v = m * std::pow(10.0, e);
            if (v >= lo && v <= hi) ticker->addTick(v, QStringLiteral("%1×").arg(v, 0, 'g', 3));
        }
    return ticker;
}

// What the page measures: attention lengths.
MeasureSizes lengthSizes() {
    return {EvalSpeedPanel::tr("Attention &lengths"), EvalSpeedPanel::defaultLengths(), EvalSpeedPanel::kMaxLength,
            EvalSpeedPanel::tr("an attention length"), EvalSpeedPanel::tr("lengths"),
            EvalSpeedPanel::tr("Memory lengths M (= the vanilla window), comma-separated, 1 to %1").arg(EvalSpeedPanel::kMaxLength),
            EvalSpeedPanel::tr("Times both models at every length in the background (a few seconds per length)"),
            QStringLiteral("evalSpeedLengths")};
}

}  // namespace

QVector<int> EvalSpeedPanel::parseLengths(const QString& text, QString* error) {
    return MeasureControls::parseSizes(text, lengthSizes(), error);
}

EvalSpeedPanel::EvalSpeedPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QHBoxLayout(this);
    m_controls = new MeasureControls(lengthSizes(), this);
    connect(m_controls, &MeasureControls::measureWanted, this, &EvalSpeedPanel::requestMeasure);
    connect(m_controls, &MeasureControls::cancelRequested, this, &EvalSpeedPanel::cancelRequested);
    layout->addWidget(m_controls);

    auto* right = new QVBoxLayout;
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    m_plot->setMinimumHeight(160);
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis, m_plot->yAxis2}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setNumberFormat(QStringLiteral("gb"));
        axis->setNumberPrecision(0);
    }
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_plot->yAxis2->setVisible(true);
    m_plot->xAxis->setLabel(tr("attention length"));
    m_plot->yAxis->setLabel(tr("ms per token"));
    m_plot->yAxis2->setLabel(tr("vanilla / Transformer-XL"));
    m_plot->yAxis2->setTicker(ratioTicks(1, 1000));
    styleDiagnosticAxis(m_plot->yAxis2, m_plot->palette().color(QPalette::Text), m_plot->font());
    const auto& palette = CategoricalPalette::standard();
    const auto addGraph = [&](QCPAxis* valueAxis, const QString& name, const QColor& colour, Qt::PenStyle style,
                              QCPScatterStyle::ScatterShape shape) {
        QCPGraph* g = m_plot->addGraph(m_plot->xAxis, valueAxis);
        g->setName(name);
        g->setPen(QPen(colour, 2, style));
        g->setScatterStyle(QCPScatterStyle(shape, colour, 7));
        return g;
    };
    m_memoryGraph = addGraph(m_plot->yAxis, tr("Transformer-XL, cached memory"), palette.color(0), Qt::SolidLine, QCPScatterStyle::ssDisc);
    m_recomputeGraph = addGraph(m_plot->yAxis, tr("vanilla, window recomputed"), palette.color(1), Qt::SolidLine, QCPScatterStyle::ssSquare);
    m_ratioGraph = addGraph(m_plot->yAxis2, tr("ratio (right axis)"), palette.color(2), Qt::DashLine, QCPScatterStyle::ssTriangle);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(m_plot->font());
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    right->addWidget(m_plot, 1);
    auto* note = new QLabel(paperNote(), this);
    note->setObjectName(QStringLiteral("evalSpeedNote"));
    note->setTextFormat(Qt::PlainText);
    note->setWordWrap(true);
    right->addWidget(note);
    layout->addLayout(right, 1);
    redraw();
}

QLineEdit* EvalSpeedPanel::lengthsEdit() const { return m_controls->sizesEdit(); }
QPushButton* EvalSpeedPanel::measureButton() const { return m_controls->measureButton(); }
QPushButton* EvalSpeedPanel::cancelButton() const { return m_controls->cancelButton(); }
QString EvalSpeedPanel::status() const { return m_controls->status(); }
bool EvalSpeedPanel::isRunning() const { return m_controls->isRunning(); }

void EvalSpeedPanel::requestMeasure() {
    if (isRunning()) return;
    const QVector<int> lengths = m_controls->sizes();
    if (!lengths.isEmpty()) Q_EMIT measureRequested(lengths);
}

void EvalSpeedPanel::setStarted(int total) {
    m_samples.clear();
    m_controls->setStarted(total);
    redraw();
}

void EvalSpeedPanel::addSample(const EvalSpeedSample& sample) {
    m_samples.push_back(sample);
    std::sort(m_samples.begin(), m_samples.end(), [](const auto& a, const auto& b) { return a.length < b.length; });
    redraw();
}

void EvalSpeedPanel::setProgress(int done, int total, const QString& text) { m_controls->setProgress(done, total, text); }

void EvalSpeedPanel::setFinished(const QString& message) { m_controls->setFinished(message); }

void EvalSpeedPanel::redraw() {
    QVector<double> x, memory, recompute, ratio;
    for (const auto& s : m_samples) {
        x << s.length;
        memory << s.memoryMs;
        recompute << s.recomputeMs;
        ratio << (s.memoryMs > 0 ? s.recomputeMs / s.memoryMs : 0);
    }
    m_memoryGraph->setData(x, memory, true);
    m_recomputeGraph->setData(x, recompute, true);
    m_ratioGraph->setData(x, ratio, true);
    // labels: every ratio beside its point
    m_plot->clearItems();
    for (int i = 0; i < x.size(); ++i) {
        auto* label = new QCPItemText(m_plot);
        label->position->setAxes(m_plot->xAxis, m_plot->yAxis2);
        label->position->setCoords(x[i], ratio[i]);
        label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        label->setPadding(QMargins(0, 0, 0, 6));
        label->setText(QStringLiteral("%1×").arg(ratio[i], 0, 'f', ratio[i] < 10 ? 1 : 0));
        label->setColor(m_plot->palette().color(QPalette::Text));
    }
    if (x.isEmpty()) {
        m_plot->xAxis->setRange(32, 1024);
        m_plot->yAxis->setRange(0.01, 100);
        m_plot->yAxis2->setRange(1, 1000);
    } else {
        m_plot->xAxis->setTicker(lengthTicks(m_samples));
        m_plot->xAxis->setRange(x.front() / 1.5, x.back() * 1.5);
        const auto [lo, hi] = std::minmax_element(memory.begin(), memory.end());
        const double top = *std::max_element(recompute.begin(), recompute.end());
        m_plot->yAxis->setRange(std::max(*lo / 2, 1e-6), std::max(top, *hi) * 2);
        const auto [rlo, rhi] = std::minmax_element(ratio.begin(), ratio.end());
        const QCPRange ratioRange(std::max(*rlo / 2, 0.1), std::max(*rhi * 3, 1.0));
        m_plot->yAxis2->setRange(ratioRange);
        m_plot->yAxis2->setTicker(ratioTicks(ratioRange.lower, ratioRange.upper));
    }
    replotWhenShown(m_plot);
}

}  // namespace attnscope::views
