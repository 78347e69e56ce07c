#include "views/diagnostics/spectrum_plot.h"

#include <attnscope/diagnostics.h>

#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QLabel>
#include <QStackedLayout>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {

constexpr double kEnergyLevel = 0.9;
const QColor kSingularColor(31, 119, 180);
const QColor kEnergyColor(255, 127, 14);
const QColor kRankColor(214, 39, 40);
const QColor kKColor(44, 160, 44);

QCPItemStraightLine* verticalLine(QCustomPlot* plot, const QColor& color, Qt::PenStyle style) {
    auto* line = new QCPItemStraightLine(plot);
    line->setPen(QPen(color, 1.5, style));
    // x in plot coordinates, y across the axis rect, so the log axis never sees y = 0.
    for (QCPItemPosition* p : {line->point1, line->point2}) {
        p->setTypeX(QCPItemPosition::ptPlotCoords);
        p->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    line->point1->setCoords(0, 0);
    line->point2->setCoords(0, 1);
    line->setVisible(false);
    return line;
}

QCPItemText* lineLabel(QCustomPlot* plot, const QColor& color, double yRatio) {
    auto* text = new QCPItemText(plot);
    text->position->setTypeX(QCPItemPosition::ptPlotCoords);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0, yRatio);
    text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    text->setColor(color);
    text->setPadding(QMargins(4, 2, 4, 2));
    text->setBrush(QBrush(QColor(255, 255, 255, 210)));
    text->setVisible(false);
    return text;
}

}  // namespace

SpectrumPlot::SpectrumPlot(QWidget* parent) : ResultPage(parent) {
    m_stack = new QStackedLayout(this);
    m_plot = new QCustomPlot(this);
    m_message = new QLabel(this);
    m_message->setTextFormat(Qt::PlainText);  // warnings may quote user input
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setMargin(24);
    m_stack->addWidget(m_plot);
    m_stack->addWidget(m_message);

    styleDiagnosticPlot(m_plot);
    QFont titleFont = font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(std::max(11.0, titleFont.pointSizeF() + 1));
    m_title = new QCPTextElement(m_plot, QString(), titleFont);
    m_title->setTextColor(palette().color(QPalette::Text));
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_title);

    m_plot->xAxis->setLabel(tr("rank r"));
    m_plot->yAxis->setLabel(tr("singular value σ_r (log)"));
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_plot->yAxis->setNumberFormat(QStringLiteral("eb"));
    m_plot->yAxis->setNumberPrecision(0);
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setLabel(tr("cumulative energy Σσ²  (fraction)"));
    m_plot->yAxis2->setRange(0, 1.05);
    m_plot->yAxis->setLabelColor(kSingularColor);
    m_plot->yAxis2->setLabelColor(kEnergyColor);

    QCPGraph* singular = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    singular->setName(tr("singular value σ_r"));
    singular->setPen(QPen(kSingularColor, 2));
    singular->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    QCPGraph* energy = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    energy->setName(tr("cumulative energy"));
    energy->setPen(QPen(kEnergyColor, 2));
    energy->setLineStyle(QCPGraph::lsStepLeft);

    m_energyLine = new QCPItemStraightLine(m_plot);
    m_energyLine->setPen(QPen(kEnergyColor, 1, Qt::DotLine));
    m_energyLine->point1->setAxes(m_plot->xAxis, m_plot->yAxis2);
    m_energyLine->point2->setAxes(m_plot->xAxis, m_plot->yAxis2);
    m_energyLine->point1->setCoords(0, kEnergyLevel);
    m_energyLine->point2->setCoords(1, kEnergyLevel);
    m_rankLine = verticalLine(m_plot, kRankColor, Qt::SolidLine);
    m_rankText = lineLabel(m_plot, kRankColor, 0.03);
    m_kLine = verticalLine(m_plot, kKColor, Qt::DashLine);
    m_kText = lineLabel(m_plot, kKColor, 0.14);

    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignRight | Qt::AlignBottom);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeZoomAxes(m_plot->xAxis, nullptr);
    m_plot->axisRect()->setRangeDragAxes(m_plot->xAxis, nullptr);
    rebuild();
}

SpectrumPlot::~SpectrumPlot() = default;

const engine::AttentionResult* SpectrumPlot::chosenResult() const {
    if (!m_result) return nullptr;
    return engine::resultWithSpectrum(*m_result, m_state ? m_state->resultIndex() : 0);
}

void SpectrumPlot::showMessage(const QString& text) {
    m_shownHead = -1;
    m_singular.clear();
    for (int g = 0; g < m_plot->graphCount(); ++g) m_plot->graph(g)->data()->clear();
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void SpectrumPlot::rebuild() {
    const engine::AttentionResult* r = chosenResult();
    if (!m_result) return showMessage(tr("No result yet."));
    if (!r) return showMessage(tr("The spectrum is a Linformer diagnostic: choose the linformer variant and run."));
    const auto spectrum = engine::readSpectrum(*r);
    if (!spectrum) {
        // Say why in words: the run's own warnings (prefixed by the variant's id) carry the engine's reason.
        QStringList why;
        for (const auto& w : m_result->warnings)
            if (w.rfind(r->variantId, 0) == 0 || w.find("weights not kept") != std::string::npos) why << QString::fromStdString(w);
        QString text = tr("No spectrum for this run: the singular values of the exact softmax matrix are computed only "
                          "when weights are kept, n ≤ 2048 (the SVD costs O(n³) per head) and the “spectrum” "
                          "parameter is on. Here n = %1.")
                           .arg(r->n);
        if (!why.isEmpty()) text += QLatin1Char('\n') + tr("The run says: %1").arg(why.join(QStringLiteral("; ")));
        return showMessage(text);
    }
    const engine::PlainTensor* sv = spectrum->singularValues;
    const engine::PlainTensor* energy = spectrum->energy;
    const std::int64_t heads = spectrum->heads, count = spectrum->count;
    const int head = static_cast<int>(std::clamp<std::int64_t>(m_state ? m_state->head() : 0, 0, heads - 1));
    m_shownHead = head;
    m_singular.resize(static_cast<int>(count));
    double top = 0, smallestPositive = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        const double s = sv->f32[static_cast<std::size_t>(head * count + i)];
        m_singular[static_cast<int>(i)] = s;
        top = std::max(top, s);
        if (s > 0 && (smallestPositive == 0 || s < smallestPositive)) smallestPositive = s;
    }
    // NOTE: a log axis cannot show σ = 0 (rank-deficient matrices): zeros sit on a floor
    // a decade below the smallest positive value (or 1e-12 of the largest).
    const double floor = smallestPositive > 0 ? std::max(smallestPositive / 10, top * 1e-12) : 1e-12;
    QVector<double> xs(static_cast<int>(count)), ys(static_cast<int>(count)), es(static_cast<int>(count));
    for (int i = 0; i < count; ++i) {
        xs[i] = i + 1;
        ys[i] = m_singular[i] > 0 ? m_singular[i] : floor;
        es[i] = energy->f32[static_cast<std::size_t>(head * count + i)];
    }
    m_plot->graph(0)->setData(xs, ys, true);
    m_plot->graph(1)->setData(xs, es, true);

    const engine::PlainTensor* rank90 = spectrum->rank90;
    long long rank = 0;
    if (rank90 && static_cast<std::int64_t>(rank90->i64.size()) > head) {
        rank = rank90->i64[static_cast<std::size_t>(head)];
    } else {
        // Older files without rank90: the same rule, smallest r with energy ≥ 0.9.
        while (rank < count && es[static_cast<int>(rank)] < kEnergyLevel) ++rank;
        rank = std::min<long long>(rank + 1, count);
    }
    const long long k = resultParamInt(*r, "k", 0);
    m_rankLine->point1->setCoords(static_cast<double>(rank), 0);
    m_rankLine->point2->setCoords(static_cast<double>(rank), 1);
    m_rankText->position->setCoords(static_cast<double>(rank), 0.03);
    m_rankText->setText(tr("rank at 90 %: %1 of %2").arg(rank).arg(count));
    m_rankLine->setVisible(rank > 0);
    m_rankText->setVisible(rank > 0);
    const bool showK = k > 0 && k <= count;
    m_kLine->point1->setCoords(static_cast<double>(k), 0);
    m_kLine->point2->setCoords(static_cast<double>(k), 1);
    m_kText->position->setCoords(static_cast<double>(k), 0.14);
    m_kText->setText(tr("k = %1 (projected length)").arg(k));
    m_kLine->setVisible(showK);
    m_kText->setVisible(showK);
    // A line in the right half carries its label on its left, so the label stays inside the axes.
    for (QCPItemText* label : {m_rankText, m_kText}) {
        const bool rightHalf = label->position->coords().x() > (count + 1) / 2.0;
        label->setPositionAlignment((rightHalf ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    }

    m_title->setText(tr("linformer — head %1: spectrum of the exact softmax attention (n = %2)").arg(head).arg(count));
    m_plot->xAxis->setRange(0.5, count + 0.5);
    const bool hasZero = std::any_of(m_singular.begin(), m_singular.end(), [](double s) { return !(s > 0); });
    m_plot->yAxis->setRange((hasZero || smallestPositive <= 0 ? floor : smallestPositive) / 2, top > 0 ? top * 2 : 1);
    m_stack->setCurrentWidget(m_plot);
    replotWhenShown(m_plot);
}

QVector<double> SpectrumPlot::plottedSingularValues() const {
    QVector<double> out;
    for (auto it = m_plot->graph(0)->data()->constBegin(); it != m_plot->graph(0)->data()->constEnd(); ++it)
        out << it->value;
    return out;
}

QVector<double> SpectrumPlot::plottedEnergy() const {
    QVector<double> out;
    for (auto it = m_plot->graph(1)->data()->constBegin(); it != m_plot->graph(1)->data()->constEnd(); ++it)
        out << it->value;
    return out;
}

double SpectrumPlot::rank90Marker() const { return m_rankLine->visible() ? m_rankLine->point1->coords().x() : 0.0; }
double SpectrumPlot::kMarker() const { return m_kLine->visible() ? m_kLine->point1->coords().x() : 0.0; }
QString SpectrumPlot::rank90Label() const { return m_rankText->visible() ? m_rankText->text() : QString(); }
QString SpectrumPlot::message() const { return m_stack->currentWidget() == m_message ? m_message->text() : QString(); }

}  // namespace attnscope::views
