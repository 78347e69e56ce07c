#include "views/atlas/rollout_view.h"

#include "views/data/colormap.h"
#include "views/diagnostics/plot_style.h"
#include "views/widgets/qcp.h"
#include "views/data/token_label.h"

#include <QComboBox>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

bool isSquareF32(const engine::PlainTensor& t) {
    return t.dtype == engine::DType::F32 && t.shape.size() == 2 && t.shape[0] == t.shape[1] && t.shape[0] > 0 &&
           static_cast<std::int64_t>(t.f32.size()) == t.numel();
}

}  // namespace

RolloutView::RolloutView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_kindCombo = new QComboBox(this);
    m_kindCombo->addItem(tr("Attention rollout"), static_cast<int>(Kind::Rollout));
    m_kindCombo->addItem(tr("Attention flow"), static_cast<int>(Kind::Flow));
    m_kindCombo->setItemData(0, tr("Head-mean attention with the residual path (½A + ½I), multiplied across layers"),
                             Qt::ToolTipRole);
    m_kindCombo->setItemData(1,
                             tr("Max-flow from each input token to each output token through the layers' "
                                "attention graph (computed up to 64 tokens)"),
                             Qt::ToolTipRole);
    m_kindCombo->setProperty("attnscopeExportSkip", true);  // FigurePainter::kSkipProperty: not in figures
    layout->addWidget(m_kindCombo, 0, Qt::AlignLeft);
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    layout->addWidget(m_plot, 1);
    const TitledColorMap frame = addTitledViridisMap(m_plot, tr("Attention rollout"));
    m_title = frame.title;
    m_map = frame.map;
    m_scale = frame.scale;
    m_scale->axis()->setLabel(tr("rollout weight"));
    styleDiagnosticAxis(m_scale->axis(), m_plot->palette().color(QPalette::Text), m_plot->font());
    auto* margins = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_scale->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_plot->xAxis->setLabel(tr("input token"));
    m_plot->yAxis->setLabel(tr("output token"));
    m_plot->yAxis->setRangeReversed(true);  // token 0 on top, as matrices are read
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &RolloutView::onMouseMove);
    connect(m_kindCombo, &QComboBox::currentIndexChanged, this, &RolloutView::showMatrix);
    clear();
}

void RolloutView::clear(const QString& message) {
    if (message.isEmpty()) {
        m_rolloutData = {};
        m_flowData = {};
        m_tokens.clear();
    }
    m_n = 0;
    m_labels.clear();
    m_map->data()->clear();
    m_map->setVisible(false);
    m_title->setText(message.isEmpty() ? tr("Attention rollout: analyse a model") : message);
    replotWhenShown(m_plot);
}

void RolloutView::setMatrices(const engine::PlainTensor& rollout, const engine::PlainTensor& flow,
                              const std::vector<engine::Token>& tokens) {
    m_rolloutData = rollout;
    m_flowData = flow;
    m_tokens = tokens;
    showMatrix();
}

RolloutView::Kind RolloutView::kind() const { return static_cast<Kind>(m_kindCombo->currentData().toInt()); }

void RolloutView::setKind(Kind kind) { m_kindCombo->setCurrentIndex(m_kindCombo->findData(static_cast<int>(kind))); }

void RolloutView::showMatrix() {
    const bool flow = kind() == Kind::Flow;
    const engine::PlainTensor& shown = flow ? m_flowData : m_rolloutData;
    if (!isSquareF32(shown)) {
        if (m_rolloutData.shape.empty() && m_flowData.shape.empty() && m_tokens.empty())
            clear();
        else
            clear(flow ? tr("Attention flow: not computed for this input (more than 64 tokens)")
                       : tr("Attention rollout: not computed"));
        return;
    }
    m_n = static_cast<int>(shown.shape[0]);
    m_labels.assign(static_cast<std::size_t>(m_n), QString());
    for (int i = 0; i < m_n; ++i)
        m_labels[static_cast<std::size_t>(i)] = i < static_cast<int>(m_tokens.size())
                                                    ? tokenLabel(m_tokens[static_cast<std::size_t>(i)].text, 12)
                                                    : QString::number(i);
    auto* data = m_map->data();
    data->setSize(m_n, m_n);
    data->setRange(QCPRange(0, m_n - 1), QCPRange(0, m_n - 1));
    double hi = 0;
    for (int i = 0; i < m_n; ++i) {
        for (int j = 0; j < m_n; ++j) {
            const double v =
                shown.f32[static_cast<std::size_t>(i) * static_cast<std::size_t>(m_n) + static_cast<std::size_t>(j)];
            data->setCell(j, i, v);  // x = input token, y = output token
            if (std::isfinite(v)) hi = std::max(hi, v);
        }
    }
    m_map->setDataRange(QCPRange(0, hi > 0 ? hi : 1));
    m_map->setVisible(true);
    const bool tokenTicks = m_n <= kMaxTokenTicks;
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        if (tokenTicks) {
            auto ticker = QSharedPointer<QCPAxisTickerText>::create();
            for (int i = 0; i < m_n; ++i) ticker->addTick(i, m_labels[static_cast<std::size_t>(i)]);
            axis->setTicker(ticker);
        } else {
            auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
            ticker->setTickStep(1.0);
            ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
            axis->setTicker(ticker);
        }
        axis->setSubTicks(false);
        axis->setRange(-0.5, m_n - 0.5);
    }
    m_plot->xAxis->setTickLabelRotation(tokenTicks ? -90 : 0);
    m_scale->axis()->setLabel(flow ? tr("flow") : tr("rollout weight"));
    m_title->setText(flow ? tr("Attention flow (Abnar & Zuidema 2020), %n token(s)", nullptr, m_n)
                          : tr("Attention rollout (Abnar & Zuidema 2020), %n token(s)", nullptr, m_n));
    replotWhenShown(m_plot);
}

double RolloutView::value(int i, int j) const {
    if (i < 0 || j < 0 || i >= m_n || j >= m_n) return std::numeric_limits<double>::quiet_NaN();
    return m_map->data()->cell(j, i);
}

void RolloutView::onMouseMove(QMouseEvent* event) {
    if (m_n == 0) return;
    const int j = static_cast<int>(std::lround(m_plot->xAxis->pixelToCoord(event->position().x())));
    const int i = static_cast<int>(std::lround(m_plot->yAxis->pixelToCoord(event->position().y())));
    if (i < 0 || j < 0 || i >= m_n || j >= m_n || !m_plot->axisRect()->rect().contains(event->position().toPoint())) {
        QToolTip::hideText();
        return;
    }
    // Token text is user data: escaped, inside markup so it is never taken as rich text (FORMATS.md §5).
    const QString text =
        tr("output %1 “%2” ← input %3 “%4”: %5 %6")
            .arg(QString::number(i), m_labels[static_cast<std::size_t>(i)], QString::number(j),
                 m_labels[static_cast<std::size_t>(j)], kind() == Kind::Flow ? tr("flow") : tr("rollout"),
                 QString::number(value(i, j), 'g', 4));
    QToolTip::showText(event->globalPosition().toPoint(),
                       QStringLiteral("<p style='white-space:pre'>%1</p>").arg(text.toHtmlEscaped()), m_plot);
}

}  // namespace attnscope::views
