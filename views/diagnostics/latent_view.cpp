#include "views/diagnostics/latent_view.h"

#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnscope::views {

namespace {

constexpr double kRankTolerance = 1e-6;  // relative to the largest singular value
const QColor kValuesColor(31, 119, 180);
const QColor kLatentColor(214, 39, 40);

}  // namespace

LatentView::LatentView(QWidget* parent) : ResultPage(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_info = addExplanationLabel(this, layout);
    auto* plots = new QHBoxLayout;
    m_spectrum = new QCustomPlot(this);
    styleDiagnosticPlot(m_spectrum);
    m_spectrum->xAxis->setLabel(tr("rank r"));
    m_spectrum->yAxis->setLabel(tr("singular value σ_r (log)"));
    m_spectrum->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_spectrum->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_spectrum->yAxis->setNumberFormat(QStringLiteral("eb"));
    m_spectrum->yAxis->setNumberPrecision(0);
    QCPGraph* values = m_spectrum->addGraph();
    values->setPen(QPen(kValuesColor, 1.5));
    values->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    auto* latent = new QCPItemStraightLine(m_spectrum);
    latent->setPen(QPen(kLatentColor, 1.5, Qt::DashLine));
    for (QCPItemPosition* p : {latent->point1, latent->point2}) {
        p->setTypeX(QCPItemPosition::ptPlotCoords);
        p->setTypeY(QCPItemPosition::ptAxisRectRatio);  // (a log axis never sees y = 0)
    }
    plots->addWidget(m_spectrum, 3);
    m_split = new QCustomPlot(this);
    styleDiagnosticPlot(m_split);
    m_split->yAxis->setLabel(tr("rotary share of |score| (%)"));
    addHeadBars(m_split, QColor(255, 127, 14));
    plots->addWidget(m_split, 2);
    layout->addLayout(plots, 1);
    rebuild();
}

LatentView::~LatentView() = default;

QString LatentView::text() const { return m_info->text(); }

void LatentView::drawSpectrum(const engine::LatentAttentionProfile& p) {
    QVector<double> ranks;
    m_values.clear();
    m_rank = 0;
    const double top = p.keySingularValues.empty() ? 0.0 : p.keySingularValues.front();
    for (std::size_t r = 0; r < p.keySingularValues.size(); ++r) {
        const double v = p.keySingularValues[r];
        ranks << static_cast<double>(r + 1);
        m_values << std::max(v, top * 1e-12);  // (the log axis draws exact zeros at the floor)
        m_rank += v > kRankTolerance * top ? 1 : 0;
    }
    m_spectrum->graph(0)->setData(ranks, m_values, true);
    auto* latent = qobject_cast<QCPItemStraightLine*>(m_spectrum->item(0));
    latent->point1->setCoords(static_cast<double>(p.latentRank), 0);
    latent->point2->setCoords(static_cast<double>(p.latentRank), 1);
    // a latent far wider than the text's rank bound stays off the axis (the text says so)
    const bool bounding = p.latentRank <= static_cast<std::int64_t>(m_values.size()) * 2;
    latent->setVisible(bounding);
    m_spectrum->xAxis->setRange(0, (bounding ? std::max<double>(static_cast<double>(m_values.size()), static_cast<double>(p.latentRank))
                                             : static_cast<double>(m_values.size())) + 1);
    m_spectrum->yAxis->setRange(std::max(top * 1e-8, *std::min_element(m_values.begin(), m_values.end()) * 0.5), top * 2);
}

void LatentView::drawSplit(const engine::LatentAttentionProfile& p) {
    QVector<double> heads;
    m_rotary.clear();
    for (std::size_t h = 0; h < p.ropeTerm.size() && h < p.nopeTerm.size(); ++h) {
        const double total = p.ropeTerm[h] + p.nopeTerm[h];
        heads << static_cast<double>(h);
        m_rotary << (total > 0 ? 100.0 * p.ropeTerm[h] / total : 0.0);
    }
    qobject_cast<QCPBars*>(m_split->plottable(0))->setData(heads, m_rotary, true);
    m_split->xAxis->setRange(-0.6, static_cast<double>(heads.size()) - 0.4);
    m_split->yAxis->setRange(0, 100);
}

void LatentView::rebuild() {
    const bool shown = m_result && m_result->latentProfile && !m_result->latentProfile->keySingularValues.empty();
    m_spectrum->setVisible(shown);
    m_split->setVisible(shown);
    if (!shown) {
        m_values.clear();
        m_rotary.clear();
        m_rank = 0;
        m_info->setText(tr("This page shows a latent-attention layer (DeepSeek-V2, V3): open such a model and run a layer."));
        return;
    }
    const engine::LatentAttentionProfile& p = *m_result->latentProfile;
    drawSpectrum(p);
    drawSplit(p);
    replotWhenShown(m_spectrum);
    replotWhenShown(m_split);
    const int head = std::clamp(m_state ? m_state->head() : 0, 0, static_cast<int>(m_rotary.size()) - 1);
    const double mean = m_rotary.isEmpty() ? 0.0 : std::accumulate(m_rotary.begin(), m_rotary.end(), 0.0) / m_rotary.size();
    const QString bound = p.n < p.latentRank
                              ? tr("On these %1 tokens they have rank %2 (a text shorter than %3 tokens bounds the rank "
                                   "itself: longer texts meet the latent's bound).")
                              : tr("On these %1 tokens they have rank %2 (dashed: %3).");
    m_info->setText(tr("Keys and values come from one latent of %1 features per token (kv_lora_rank): the %2 heads' "
                       "non-rotary keys, %2 × %3 = %4 features, are all made from it, so at most %1 of their singular "
                       "values are non-zero (left). %5 Besides, every head shares one rotary key of %6 features: its "
                       "product carries %7 % of head %8's score size (right; %9 % on average), the non-rotary product "
                       "the rest.")
                        .arg(p.latentRank)
                        .arg(p.heads)
                        .arg(p.nope)
                        .arg(p.heads * p.nope)
                        .arg(bound.arg(p.n).arg(m_rank).arg(p.latentRank))
                        .arg(p.rope)
                        .arg(m_rotary.isEmpty() ? 0.0 : m_rotary[head], 0, 'f', 1)
                        .arg(head)
                        .arg(mean, 0, 'f', 1));
}

}  // namespace attnscope::views
