#include "views/cost/switch_ffn_panel.h"

#include "views/widgets/measure_controls.h"

#include "views/diagnostics/categorical_palette.h"
#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace attnscope::views {
namespace {

QString explanation() {
    return QObject::tr(
        "A Switch layer sends each token to one of E experts, so a token costs the FLOPs of one FFN while the "
        "layer holds E FFNs' weights (Fedus et al. 2021 §2). Here a Switch layer of E experts (d_model 256, "
        "d_ff 1024, random weights, the trainer's own code) runs against the dense FFN of one expert's size "
        "on the same tokens, on this machine's CPU: the router, the dispatch and E small matrix products "
        "against one large one. Tokens past an expert's capacity are dropped (the residual carries them).");
}

QString mib(std::uint64_t bytes) { return QStringLiteral("%1 MiB").arg(static_cast<double>(bytes) / (1 << 20), 0, 'f', 2); }

// What the page measures: token counts.
MeasureSizes tokenSizes() {
    const int most = static_cast<int>(engine::SwitchFfnCostSettings::kMaxTokens);
    return {SwitchFfnPanel::tr("&Tokens"), SwitchFfnPanel::defaultTokens(), most, SwitchFfnPanel::tr("a token count"),
            SwitchFfnPanel::tr("token counts"), SwitchFfnPanel::tr("Token counts, comma-separated, 1 to %1").arg(most),
            SwitchFfnPanel::tr("Times both layers at every token count in the background"), QStringLiteral("switchFfnTokens")};
}

}  // namespace

QVector<int> SwitchFfnPanel::parseTokens(const QString& text, QString* error) {
    return MeasureControls::parseSizes(text, tokenSizes(), error);
}

SwitchFfnPanel::SwitchFfnPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(buildControls());
    auto* right = new QVBoxLayout;
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("switchFfnPlot"));
    styleDiagnosticPlot(m_plot);
    m_plot->setMinimumHeight(160);
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        axis->setNumberFormat(QStringLiteral("gb"));
    }
    m_plot->xAxis->setLabel(tr("tokens"));
    m_plot->yAxis->setLabel(tr("ms per pass"));
    const auto& palette = CategoricalPalette::standard();
    const auto addGraph = [&](const QString& name, const QColor& colour, QCPScatterStyle::ScatterShape shape) {
        QCPGraph* g = m_plot->addGraph();
        g->setName(name);
        g->setPen(QPen(colour, 2));
        g->setScatterStyle(QCPScatterStyle(shape, colour, 7));
        return g;
    };
    m_denseGraph = addGraph(tr("dense FFN (one expert's size)"), palette.color(0), QCPScatterStyle::ssDisc);
    m_switchGraph = addGraph(tr("Switch layer (router + E experts)"), palette.color(1), QCPScatterStyle::ssSquare);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(m_plot->font());
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    right->addWidget(m_plot, 1);
    m_table = new QLabel(this);
    m_table->setObjectName(QStringLiteral("switchFfnTable"));
    m_table->setTextFormat(Qt::RichText);
    right->addWidget(m_table);
    auto* note = new QLabel(explanation(), this);
    note->setTextFormat(Qt::PlainText);
    note->setWordWrap(true);
    right->addWidget(note);
    layout->addLayout(right, 1);
    redraw();
}

QWidget* SwitchFfnPanel::buildControls() {
    m_controls = new MeasureControls(tokenSizes(), this);
    connect(m_controls, &MeasureControls::measureWanted, this, &SwitchFfnPanel::requestMeasure);
    connect(m_controls, &MeasureControls::cancelRequested, this, &SwitchFfnPanel::cancelRequested);
    m_experts = new QSpinBox(m_controls);
    m_experts->setRange(1, 256);
    m_experts->setValue(8);
    m_controls->form()->addRow(tr("E&xperts"), m_experts);
    m_capacity = new QDoubleSpinBox(m_controls);
    m_capacity->setRange(0, 4);
    m_capacity->setSingleStep(0.25);
    m_capacity->setValue(1.25);
    m_capacity->setSpecialValueText(tr("dropless"));
    m_capacity->setToolTip(tr("Capacity factor: slots per expert = ⌈tokens / E · factor⌉; 0 = no capacity"));
    m_controls->form()->addRow(tr("Ca&pacity factor"), m_capacity);
    return m_controls;
}

QLineEdit* SwitchFfnPanel::tokensEdit() const { return m_controls->sizesEdit(); }
QPushButton* SwitchFfnPanel::measureButton() const { return m_controls->measureButton(); }
QPushButton* SwitchFfnPanel::cancelButton() const { return m_controls->cancelButton(); }

QString SwitchFfnPanel::status() const { return m_controls->status(); }
QString SwitchFfnPanel::tableHtml() const { return m_table->text(); }

void SwitchFfnPanel::requestMeasure() {
    if (m_controls->isRunning()) return;
    const QVector<int> tokens = m_controls->sizes();
    if (!tokens.isEmpty()) Q_EMIT measureRequested(tokens, m_experts->value(), m_capacity->value());
}

void SwitchFfnPanel::setStarted(int total) {
    m_points.clear();
    m_controls->setStarted(total);
    redraw();
}

void SwitchFfnPanel::addPoint(const engine::SwitchFfnCostPoint& point) {
    m_points.push_back(point);
    std::sort(m_points.begin(), m_points.end(), [](const auto& a, const auto& b) { return a.tokens < b.tokens; });
    redraw();
}

void SwitchFfnPanel::setProgress(int done, int total, const QString& text) { m_controls->setProgress(done, total, text); }

void SwitchFfnPanel::setFinished(const QString& message) { m_controls->setFinished(message); }

void SwitchFfnPanel::redraw() {
    QVector<double> x, dense, sparse;
    for (const auto& p : m_points) {
        x << static_cast<double>(p.tokens);
        dense << 1e3 * p.denseSeconds;
        sparse << 1e3 * p.switchSeconds;
    }
    m_denseGraph->setData(x, dense, true);
    m_switchGraph->setData(x, sparse, true);
    if (x.isEmpty()) {
        m_plot->xAxis->setRange(100, 20000);
        m_plot->yAxis->setRange(0.01, 100);
        m_table->setText(tr("Press Measure to time both layers."));
    } else {
        m_plot->xAxis->setRange(x.front() / 1.5, x.back() * 1.5);
        const double lo = std::min(*std::min_element(dense.begin(), dense.end()), *std::min_element(sparse.begin(), sparse.end()));
        const double hi = std::max(*std::max_element(dense.begin(), dense.end()), *std::max_element(sparse.begin(), sparse.end()));
        m_plot->yAxis->setRange(std::max(lo / 2, 1e-4), hi * 2);
        QString html = tr("<table cellpadding='3'><tr><th align='right'>tokens</th><th>dense ms</th><th>Switch ms</th>"
                          "<th>Switch / dense</th><th>activations dense / Switch</th><th>capacity</th><th>dropped</th></tr>");
        for (const auto& p : m_points)
            html += QStringLiteral("<tr><td align='right'>%1</td><td align='right'>%2</td><td align='right'>%3</td>"
                                   "<td align='right'>%4×</td><td align='right'>%5 / %6</td><td align='right'>%7</td>"
                                   "<td align='right'>%8</td></tr>")
                        .arg(p.tokens)
                        .arg(1e3 * p.denseSeconds, 0, 'f', 3)
                        .arg(1e3 * p.switchSeconds, 0, 'f', 3)
                        .arg(p.ratio(), 0, 'f', 2)
                        .arg(mib(p.denseActivationBytes), mib(p.switchActivationBytes))
                        .arg(p.capacity > 0 ? QString::number(p.capacity) : tr("none"))
                        .arg(p.dropped);
        const auto& last = m_points.back();
        html += QStringLiteral("</table>") + tr("Weights: dense %1, Switch %2 (%3× the parameters, one expert's FLOPs per token).")
                                                 .arg(mib(last.denseWeightBytes), mib(last.switchWeightBytes))
                                                 .arg(last.denseWeightBytes > 0 ? static_cast<double>(last.switchWeightBytes) /
                                                                                      static_cast<double>(last.denseWeightBytes)
                                                                                : 0.0,
                                                      0, 'f', 1);
        m_table->setText(html);
    }
    replotWhenShown(m_plot);
}

}  // namespace attnscope::views
