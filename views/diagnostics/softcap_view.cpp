#include "views/diagnostics/softcap_view.h"

#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>

namespace attnscope::views {

namespace {

constexpr const char* kSaturation = "softcap_saturation";

// The first result of the run carrying the saturation diagnostic (the model's own attention).
const engine::AttentionResult* cappedResult(const engine::RunResult& run) {
    for (const engine::AttentionResult& r : run.results)
        if (findDiagnostic(r, kSaturation)) return &r;
    return nullptr;
}

double paramNumber(const engine::AttentionResult& r, const char* name) {
    const auto it = r.params.find(name);
    if (it == r.params.end()) return 0;
    if (const auto* d = std::get_if<double>(&it->second)) return *d;
    if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
    return 0;
}

}  // namespace

SoftcapView::SoftcapView(QWidget* parent) : ResultPage(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_info = addExplanationLabel(this, layout);
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    m_plot->yAxis->setLabel(tr("scores within 10 % of the cap (%)"));
    addHeadBars(m_plot, QColor(31, 119, 180));
    layout->addWidget(m_plot, 1);
    rebuild();
}

SoftcapView::~SoftcapView() = default;

bool SoftcapView::shows(const engine::RunResult& result) { return cappedResult(result) != nullptr; }

QString SoftcapView::text() const { return m_info->text(); }

void SoftcapView::rebuild() {
    m_percent.clear();
    const engine::AttentionResult* r = m_result ? cappedResult(*m_result) : nullptr;
    const engine::PlainTensor* shares = r ? findDiagnostic(*r, kSaturation) : nullptr;
    auto* bars = qobject_cast<QCPBars*>(m_plot->plottable(0));
    if (!shares || shares->dtype != engine::DType::F32 || shares->f32.empty()) {
        bars->data()->clear();
        m_plot->setVisible(false);
        m_info->setText(tr("This page shows a soft-capped model layer (Gemma 2): open such a model and run a layer."));
        return;
    }
    QVector<double> heads;
    for (std::size_t h = 0; h < shares->f32.size(); ++h) {
        heads << static_cast<double>(h);
        m_percent << 100.0 * shares->f32[h];
    }
    bars->setData(heads, m_percent, true);
    m_plot->xAxis->setRange(-0.6, static_cast<double>(heads.size()) - 0.4);
    m_plot->yAxis->setRange(0, std::max(5.0, *std::max_element(m_percent.begin(), m_percent.end()) * 1.15));
    m_plot->setVisible(true);
    replotWhenShown(m_plot);
    const int head = std::clamp(m_state ? m_state->head() : 0, 0, static_cast<int>(heads.size()) - 1);
    const double cap = paramNumber(*r, "softcap");
    const long long window = resultParamInt(*r, "window", 0);
    const QString layer = window > 0 ? tr("This layer is local: each query sees its last %1 keys.").arg(window)
                                     : tr("This layer is global: each query sees every earlier key.");
    m_info->setText(tr("The model caps every score: s becomes c·tanh(s/c) with c = %1, so no score passes ±%1 and the "
                       "largest ones are squeezed together. Scores within 10 % of the cap (|s| ≥ %2) are the ones the cap "
                       "has flattened: %3 % of those head %4 sees, %5 % over all heads. %6")
                        .arg(cap, 0, 'g', 4)
                        .arg(0.9 * cap, 0, 'g', 4)
                        .arg(m_percent[head], 0, 'f', 2)
                        .arg(head)
                        .arg(std::accumulate(m_percent.begin(), m_percent.end(), 0.0) / m_percent.size(), 0, 'f', 2)
                        .arg(layer));
}

}  // namespace attnscope::views
