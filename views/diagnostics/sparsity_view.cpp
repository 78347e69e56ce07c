#include "views/diagnostics/sparsity_view.h"

#include <attnscope/diagnostics.h>
#include <attnscope/result_roles.h>

#include "views/diagnostics/plot_style.h"
#include "views/data/error_summary.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnscope::views {

namespace {

// Rows read for the plot: every row up to this many weights per head, evenly spaced rows above.
constexpr std::int64_t kMaxCells = 4LL * 1024 * 1024;

double meanOf(const QVector<double>& v) {
    return v.isEmpty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// True when `t` is a [H, n] tensor of `dtype` holding row `head` (a file's diagnostics may have any
// type and shape).
bool holdsHeadRows(const engine::PlainTensor* t, engine::DType dtype, int head, std::int64_t n) {
    if (!t || t->dtype != dtype || t->shape.size() != 2 || head < 0 || head >= t->shape[0] || t->shape[1] != n || n <= 0)
        return false;
    const std::size_t need = static_cast<std::size_t>((head + 1) * n);
    return dtype == engine::DType::F32 ? t->f32.size() >= need : t->i64.size() >= need;
}

// The mean over the head's rows of a per-row [H, n] F32 or I64 diagnostic or stat, NaN when absent.
double headMean(const engine::PlainTensor* t, int head, std::int64_t n) {
    const bool f32 = holdsHeadRows(t, engine::DType::F32, head, n);
    if (!f32 && !holdsHeadRows(t, engine::DType::I64, head, n)) return std::nan("");
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::size_t at = static_cast<std::size_t>(head * n + i);
        sum += f32 ? static_cast<double>(t->f32[at]) : static_cast<double>(t->i64[at]);
    }
    return sum / static_cast<double>(n);
}

const engine::PlainTensor* statOf(const engine::AttentionResult& r, const char* name) {
    const auto it = r.stats.find(name);
    return it == r.stats.end() ? nullptr : &it->second;
}

}  // namespace

SparsityView::SparsityView(QWidget* parent) : ResultPage(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_info = addExplanationLabel(this, layout);
    m_plot = new QCustomPlot(this);
    styleDiagnosticPlot(m_plot);
    m_plot->xAxis->setLabel(tr("query"));
    m_plot->yAxis->setLabel(tr("keys kept (weight > 0)"));
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setLabel(tr("exact softmax mass kept"));
    m_plot->yAxis2->setRange(0, 1.05);
    styleDiagnosticAxis(m_plot->yAxis2, palette().color(QPalette::Text), m_plot->yAxis->labelFont());
    QCPGraph* kept = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    kept->setName(tr("keys kept"));
    kept->setPen(QPen(QColor(31, 119, 180), 1.5));
    kept->setLineStyle(QCPGraph::lsStepCenter);
    QCPGraph* mass = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    mass->setName(tr("share of exact softmax's mass on them"));
    mass->setPen(QPen(QColor(214, 39, 40), 1.5));
    placeLegendBelow(m_plot, 2);
    layout->addWidget(m_plot, 1);
    rebuild();
}

SparsityView::~SparsityView() = default;

QString SparsityView::text() const { return m_info->text(); }

void SparsityView::showMessage(const QString& text) {
    m_shownHead = -1;
    m_kept.clear();
    m_mass.clear();
    for (int g = 0; g < m_plot->graphCount(); ++g) m_plot->graph(g)->data()->clear();
    m_plot->setVisible(false);
    m_info->setText(text);
}

void SparsityView::rebuild() {
    if (!m_result) return showMessage(tr("No result yet."));
    const engine::AttentionResult* r =
        engine::resultForPage(*m_result, m_state ? m_state->resultIndex() : 0, engine::DiagnosticsPage::Sparsity);
    if (!r) return showMessage(tr("This page shows what a sparse variant keeps: choose Longformer, BigBird, top-k or entmax and run."));
    if (!r->weights || r->n <= 0 || r->m <= 0) return showMessage(tr("This %1 result kept no weights.").arg(QString::fromStdString(r->variantId)));
    const int head = std::clamp(m_state ? m_state->head() : 0, 0, static_cast<int>(r->heads) - 1);
    const int reference = engine::exactReferenceIndex(*m_result);
    const engine::AttentionResult* exact =
        reference >= 0 && engine::comparableShapes(m_result->results[static_cast<std::size_t>(reference)], *r)
            ? &m_result->results[static_cast<std::size_t>(reference)]
            : nullptr;
    m_shownHead = head;
    m_kept.clear();
    m_mass.clear();
    const std::int64_t step = std::max<std::int64_t>(1, r->n * r->m / kMaxCells);
    QVector<double> rows;
    std::vector<double> w, e;
    for (std::int64_t i = 0; i < r->n; i += step) {
        denseWeightRow(*r, head, i, w);
        double kept = 0, mass = 0;
        if (exact) denseWeightRow(*exact, head, i, e);
        for (std::size_t j = 0; j < w.size(); ++j) {
            if (!(w[j] > 0)) continue;
            ++kept;
            if (exact) mass += e[j];
        }
        rows << static_cast<double>(i);
        m_kept << kept;
        if (exact) m_mass << mass;
    }
    m_plot->setVisible(true);
    m_plot->graph(0)->setData(rows, m_kept, true);
    m_plot->graph(1)->setData(exact ? rows : QVector<double>{}, m_mass, true);
    m_plot->graph(1)->setVisible(exact != nullptr);
    m_plot->yAxis2->setVisible(exact != nullptr);
    m_plot->xAxis->setRange(-0.5, static_cast<double>(r->n) - 0.5);
    m_plot->yAxis->setRange(0, static_cast<double>(r->m) * 1.05);
    replotWhenShown(m_plot);

    const auto [fewest, most] = std::minmax_element(m_kept.begin(), m_kept.end());
    QString numbers = tr("Head %1: rows keep %2 of %3 keys on average (%4 to %5)")
                          .arg(head)
                          .arg(meanOf(m_kept), 0, 'f', 1)
                          .arg(r->m)
                          .arg(*fewest)
                          .arg(*most);
    if (exact) {
        const auto least = std::min_element(m_mass.begin(), m_mass.end());
        numbers += tr("; they hold %1 of exact softmax's mass on average (the least: %2, row %3) — the rest is what "
                      "the variant drops.")
                       .arg(meanOf(m_mass), 0, 'f', 3)
                       .arg(*least, 0, 'f', 3)
                       .arg(rows[static_cast<int>(least - m_mass.begin())]);
    } else {
        numbers += tr(". Run on the Diagnostics tab (F5) to see the share of exact softmax's mass they hold: it runs "
                      "“full” beside the variant.");
    }
    if (step > 1) numbers += tr(" (every %1th row plotted)").arg(step);
    m_info->setText(explanation(*r, head) + QLatin1Char(' ') + numbers);
}

QString SparsityView::explanation(const engine::AttentionResult& r, int head) const {
    const QString id = QString::fromStdString(r.variantId);
    if (id == QLatin1String("topk")) {
        const engine::PlainTensor* threshold = findDiagnostic(r, "threshold");
        const engine::PlainTensor* kept = findDiagnostic(r, "kept");
        const long long k = resultParamInt(r, "k", 0);
        int ties = 0;
        if (holdsHeadRows(kept, engine::DType::I64, head, r.n))
            for (std::int64_t i = 0; i < r.n; ++i) ties += kept->i64[static_cast<std::size_t>(head * r.n + i)] > k;
        return tr("Top-k keeps each row's k = %1 largest scores and renormalises; every other key gets exactly 0. The "
                  "threshold (each row's k-th largest score) averages %2 on this head; %3 rows keep more than k "
                  "(ties at the threshold are kept).")
            .arg(k)
            .arg(headMean(threshold, head, r.n), 0, 'g', 3)
            .arg(ties);
    }
    if (id == QLatin1String("entmax")) {
        const engine::PlainTensor* alpha = findDiagnostic(r, "alpha");
        const double a = alpha && alpha->dtype == engine::DType::F32 && head < static_cast<int>(alpha->f32.size())
                             ? alpha->f32[static_cast<std::size_t>(head)]
                             : std::nan("");
        return tr("α-entmax (α = %1) gives p_j ∝ max(0, (α − 1)(z_j − max) − τ)^(1/(α − 1)): keys whose score falls below the "
                  "row's threshold τ get exactly 0 (softmax, α = 1, never gives 0). On this head τ averages %2 and a row "
                  "has %3 exact zeros on average.")
            .arg(a, 0, 'g', 3)
            .arg(headMean(statOf(r, "tau"), head, r.n), 0, 'g', 3)
            .arg(headMean(findDiagnostic(r, "zeros"), head, r.n), 0, 'f', 1);
    }
    if (id == QLatin1String("bigbird"))
        return tr("BigBird's blocks are fixed by position and the seed (a window of blocks, global blocks, random blocks), "
                  "whatever the tokens say: the mass kept shows what such a fixed pattern misses on these Q, K.");
    if (id == QLatin1String("longformer"))
        return tr("Longformer's window (and its global tokens) is fixed by position, whatever the tokens say: the mass "
                  "kept shows what a sliding window misses on these Q, K.");
    return tr("%1's pattern is fixed by position, whatever the tokens say: the mass kept shows what it misses on these Q, K.")
        .arg(id);
}

}  // namespace attnscope::views
