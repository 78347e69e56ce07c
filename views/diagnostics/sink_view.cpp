#include "views/diagnostics/sink_view.h"

#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>

namespace attnscope::views {

namespace {

constexpr const char* kSinkShare = "sink_share";
const QColor kSinkColor(148, 103, 189);

// The first result of the run carrying sink shares [H, n] (the model's own attention).
const engine::AttentionResult* sinkResult(const engine::RunResult& run) {
    for (const engine::AttentionResult& r : run.results) {
        const engine::PlainTensor* t = findDiagnostic(r, kSinkShare);
        if (t && t->dtype == engine::DType::F32 && t->shape.size() == 2 && t->shape[0] > 0 && t->shape[1] > 0 &&
            t->f32.size() == static_cast<std::size_t>(t->shape[0] * t->shape[1]))
            return &r;
    }
    return nullptr;
}

}  // namespace

SinkView::SinkView(QWidget* parent) : ResultPage(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_info = addExplanationLabel(this, layout);
    auto* plots = new QHBoxLayout;
    m_perHead = new QCustomPlot(this);
    styleDiagnosticPlot(m_perHead);
    m_perHead->yAxis->setLabel(tr("mean weight on the sink (%)"));
    addHeadBars(m_perHead, kSinkColor);
    plots->addWidget(m_perHead, 1);
    m_perRow = new QCustomPlot(this);
    styleDiagnosticPlot(m_perRow);
    m_perRow->xAxis->setLabel(tr("query"));
    m_perRow->yAxis->setLabel(tr("weight on the sink (%)"));
    QCPGraph* rows = m_perRow->addGraph();
    rows->setPen(QPen(kSinkColor, 1.5));
    rows->setLineStyle(QCPGraph::lsStepCenter);
    plots->addWidget(m_perRow, 1);
    layout->addLayout(plots, 1);
    rebuild();
}

SinkView::~SinkView() = default;

bool SinkView::shows(const engine::RunResult& result) { return sinkResult(result) != nullptr; }

QString SinkView::text() const { return m_info->text(); }

void SinkView::rebuild() {
    m_heads.clear();
    m_rows.clear();
    const engine::AttentionResult* r = m_result ? sinkResult(*m_result) : nullptr;
    m_perHead->setVisible(r != nullptr);
    m_perRow->setVisible(r != nullptr);
    if (!r) {
        m_info->setText(tr("This page shows a layer whose heads have learned sinks (GPT-OSS): open such a model and run a layer."));
        return;
    }
    const engine::PlainTensor& share = *findDiagnostic(*r, kSinkShare);
    const std::int64_t heads = share.shape[0], n = share.shape[1];
    QVector<double> headIndex, queries;
    for (std::int64_t h = 0; h < heads; ++h) {
        const float* row = share.f32.data() + h * n;
        headIndex << static_cast<double>(h);
        m_heads << 100.0 * std::accumulate(row, row + n, 0.0) / static_cast<double>(n);
    }
    const int head = std::clamp(m_state ? m_state->head() : 0, 0, static_cast<int>(heads) - 1);
    for (std::int64_t i = 0; i < n; ++i) {
        queries << static_cast<double>(i);
        m_rows << 100.0 * share.f32[static_cast<std::size_t>(head * n + i)];
    }
    qobject_cast<QCPBars*>(m_perHead->plottable(0))->setData(headIndex, m_heads, true);
    m_perHead->xAxis->setRange(-0.6, static_cast<double>(heads) - 0.4);
    // (small shares stay readable: the axes end a little above the largest, at 5 % at least)
    m_perHead->yAxis->setRange(0, std::min(100.0, std::max(5.0, 1.15 * *std::max_element(m_heads.begin(), m_heads.end()))));
    m_perRow->graph(0)->setData(queries, m_rows, true);
    m_perRow->xAxis->setRange(-0.5, static_cast<double>(n) - 0.5);
    m_perRow->yAxis->setRange(0, std::min(100.0, std::max(5.0, 1.15 * *std::max_element(m_rows.begin(), m_rows.end()))));
    replotWhenShown(m_perHead);
    replotWhenShown(m_perRow);
    const auto most = std::max_element(m_heads.begin(), m_heads.end());
    m_info->setText(tr("Every head has a learned sink logit that joins each row's softmax beside the keys and is then dropped: "
                       "the weight it takes goes to no token, so a row's weights sum to less than 1. On this layer head %1 "
                       "gives it %2 % of its queries' mass on average (right: query by query), head %3 the most, %4 % "
                       "(left). The head atlas's learned-sink share shows every layer.")
                        .arg(head)
                        .arg(m_heads[head], 0, 'f', 1)
                        .arg(static_cast<int>(most - m_heads.begin()))
                        .arg(*most, 0, 'f', 1));
}

}  // namespace attnscope::views
