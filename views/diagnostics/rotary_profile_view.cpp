#include "views/diagnostics/rotary_profile_view.h"

#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QLabel>
#include <QStackedLayout>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnscope::views {

namespace {

const QColor kRotatedColor(31, 119, 180);
const QColor kUnrotatedColor(255, 127, 14);
// The y range is fitted to distances averaged over at least this many pairs: the last few
// distances are means of one or two products and would set the scale alone.
constexpr std::int64_t kPairsForRange = 16;

QVector<double> curveOf(const QCPGraph* graph) {
    QVector<double> out;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) out << it->value;
    return out;
}

}  // namespace

RotaryProfileView::RotaryProfileView(QWidget* parent) : ResultPage(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* plotPage = new QWidget(this);
    auto* plotLayout = new QVBoxLayout(plotPage);
    plotLayout->setContentsMargins(0, 0, 0, 4);
    m_plot = new QCustomPlot(plotPage);
    m_caption = new QLabel(plotPage);
    m_caption->setWordWrap(true);
    m_caption->setTextFormat(Qt::PlainText);
    m_caption->setContentsMargins(8, 0, 8, 0);
    plotLayout->addWidget(m_plot, 1);
    plotLayout->addWidget(m_caption);
    m_message = new QLabel(this);
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setMargin(24);
    m_stack = new QStackedLayout;
    m_stack->addWidget(plotPage);
    m_stack->addWidget(m_message);
    outer->addLayout(m_stack);

    styleDiagnosticPlot(m_plot);
    QFont titleFont = font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(std::max(11.0, titleFont.pointSizeF() + 1));
    m_plot->xAxis->setLabel(tr("relative distance i − j (tokens)"));
    m_plot->yAxis->setLabel(tr("mean score q_i · k_j / √d"));

    QCPGraph* rotated = m_plot->addGraph();
    rotated->setName(tr("with rotary positions (the scores the layer's softmax takes)"));
    rotated->setPen(QPen(kRotatedColor, 2));
    QCPGraph* unrotated = m_plot->addGraph();
    unrotated->setName(tr("positions removed (q and k before the rotation)"));
    unrotated->setPen(QPen(kUnrotatedColor, 2, Qt::DashLine));
    placeLegendBelow(m_plot, 1);  // (under the axes: row 1, before the title row goes on top)
    m_title = new QCPTextElement(m_plot, QString(), titleFont);
    m_title->setTextColor(palette().color(QPalette::Text));
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeZoomAxes(m_plot->xAxis, nullptr);
    m_plot->axisRect()->setRangeDragAxes(m_plot->xAxis, nullptr);
    rebuild();
}

RotaryProfileView::~RotaryProfileView() = default;

void RotaryProfileView::showMessage(const QString& text) {
    m_shownHead = -1;
    for (int g = 0; g < m_plot->graphCount(); ++g) m_plot->graph(g)->data()->clear();
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void RotaryProfileView::rebuild() {
    if (!m_result) return showMessage(tr("No result yet."));
    if (!m_result->rotaryProfile)
        return showMessage(tr("The rotary-position profile is drawn for a layer of a model with rotary positions "
                              "(Llama, Mistral, Qwen, Mixtral, OLMoE) on texts of up to 4,096 tokens."));
    const engine::RotaryDistanceProfile& profile = *m_result->rotaryProfile;
    const std::int64_t n = profile.n;
    if (n <= 0 || profile.heads <= 0) return showMessage(tr("The text has no tokens."));
    const auto head = static_cast<int>(std::clamp<std::int64_t>(m_state ? m_state->head() : 0, 0, profile.heads - 1));
    m_shownHead = head;
    QVector<double> xs(static_cast<int>(n)), rotated(static_cast<int>(n)), unrotated(static_cast<int>(n));
    double low = 0, high = 0;
    bool first = true;
    for (std::int64_t d = 0; d < n; ++d) {
        const auto i = static_cast<int>(d);
        xs[i] = static_cast<double>(d);
        rotated[i] = profile.rotatedAt(head, d);
        unrotated[i] = profile.unrotatedAt(head, d);
        if (n - d < kPairsForRange && !first) continue;
        const double lo = std::min(rotated[i], unrotated[i]), hi = std::max(rotated[i], unrotated[i]);
        low = first ? lo : std::min(low, lo);
        high = first ? hi : std::max(high, hi);
        first = false;
    }
    m_plot->graph(0)->setData(xs, rotated, true);
    m_plot->graph(1)->setData(xs, unrotated, true);
    const double margin = std::max(1e-6, (high - low) * 0.06);
    m_plot->yAxis->setRange(low - margin, high + margin);
    m_plot->xAxis->setRange(0, std::max<double>(1, static_cast<double>(n - 1)));

    const QString group = m_result->modelKvHeads > 0
                              ? tr(" (kv %1)").arg(head / std::max<std::int64_t>(1, profile.heads / m_result->modelKvHeads))
                              : QString();
    m_title->setText(tr("layer %1, head %2%3: mean score by relative distance (n = %4)")
                         .arg(m_result->modelLayer)
                         .arg(head)
                         .arg(group)
                         .arg(n));
    QString caption = tr("Each point is the mean over the n − δ pairs of the text at distance δ = i − j (the causal mask "
                         "comes after). Rotary positions turn q and k by angles proportional to their positions, so the "
                         "score depends on i − j; Su et al. (2021, §3.4.3) show the relative score's bound decays with "
                         "distance. The dashed curve is the same head with the rotation undone: what its content alone "
                         "scores. Far distances average few pairs and are noisy; the scale fits distances with at least "
                         "%1 pairs (drag and wheel to zoom).")
                          .arg(kPairsForRange);
    if (std::abs(profile.attentionFactor - 1.0) > 1e-12)
        caption += QLatin1Char(' ') + tr("YaRN's attention factor %1 on cos and sin is removed with the rotation.")
                                          .arg(profile.attentionFactor, 0, 'g', 5);
    m_caption->setText(caption);
    m_stack->setCurrentIndex(0);
    replotWhenShown(m_plot);
}

QVector<double> RotaryProfileView::plottedRotated() const { return curveOf(m_plot->graph(0)); }
QVector<double> RotaryProfileView::plottedUnrotated() const { return curveOf(m_plot->graph(1)); }
QString RotaryProfileView::title() const { return m_title->text(); }
QString RotaryProfileView::message() const {
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

}  // namespace attnscope::views
