#include "views/diagnostics/approximation_view.h"

#include "views/data/error_summary.h"

#include <attnscope/result_roles.h>
#include <attnscope/variant_catalog.h>

#include "views/data/colormap.h"
#include "views/diagnostics/plot_style.h"
#include "views/data/inspection_state.h"
#include "views/widgets/qcp.h"

#include <QGridLayout>
#include <QCheckBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

namespace {

// Performer's weights flatten toward 1/m when most key features are under feature_eps
// (key_eps_share): say so, with the keys' scaled norm |k| d^(-1/4) that causes it.
QString explainFlatWeights(const engine::RunResult& run, const engine::AttentionResult& r, int head) {
    const auto share = r.diagnostics.find("key_eps_share");
    if (share == r.diagnostics.end() || head >= static_cast<int>(share->second.f32.size())) return {};
    const double part = share->second.f32[static_cast<std::size_t>(head)];
    if (part < 0.5) return {};
    double norms = 0;
    std::int64_t keys = 0;
    if (!run.k.empty() && run.k.shape.size() == 3 && head < run.k.shape[0]) {
        const std::int64_t m = run.k.shape[1], d = run.k.shape[2];
        const float* k = run.k.data.get() + head * m * d;
        for (std::int64_t j = 0; j < m; ++j, ++keys) {
            double sq = 0;
            for (std::int64_t c = 0; c < d; ++c) sq += static_cast<double>(k[j * d + c]) * k[j * d + c];
            norms += std::sqrt(sq) * std::pow(static_cast<double>(d), -0.25);
        }
    }
    const QString scaled = keys > 0 ? QCoreApplication::translate("ApproximationView", ", |k|·d^−¼ ≈ %1").arg(norms / keys, 0, 'f', 2) : QString();
    return QCoreApplication::translate(
               "ApproximationView",
               "Why so flat: %1 % of the key features are under feature_eps%2. The key stabiliser (the largest w·k′ over "
               "all keys and features) grows with the number of features, so eps outweighs what the keys say and each "
               "row tends to 1/m. Tick “Q, K at norm d^¼” below for the paper's regime, where the error falls as 1/√features.")
        .arg(part * 100.0, 0, 'f', 0)
        .arg(scaled);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A plot holding one colour map with its colour bar: title at (0, 0), axis rect (1, 0), bar (1, 1).
QCustomPlot* makeMapPlot(QWidget* parent, const QString& barLabel) {
    auto* plot = new QCustomPlot(parent);
    styleDiagnosticPlot(plot);
    QFont titleFont = plot->font();
    titleFont.setBold(true);
    auto* title = new QCPTextElement(plot, QString(), titleFont);
    title->setTextColor(plot->palette().color(QPalette::Text));
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, title);
    auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
    map->setInterpolate(false);
    map->setTightBoundary(false);  // whole cells at the edges (true halves the first and last)
    auto* bar = new QCPColorScale(plot);
    plot->plotLayout()->addElement(1, 1, bar);
    bar->setType(QCPAxis::atRight);
    bar->setBarWidth(10);
    map->setColorScale(bar);
    bar->axis()->setLabel(barLabel);
    styleDiagnosticAxis(bar->axis(), plot->palette().color(QPalette::Text), plot->font());
    auto* margins = new QCPMarginGroup(plot);
    plot->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    bar->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    plot->xAxis->setLabel(QObject::tr("key"));
    plot->yAxis->setLabel(QObject::tr("query"));
    plot->yAxis->setRangeReversed(true);  // query 0 on top, as matrices are read
    return plot;
}

QCPColorMap* mapOf(QCustomPlot* plot) { return static_cast<QCPColorMap*>(plot->plottable(0)); }
QCPTextElement* titleOf(QCustomPlot* plot) { return static_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0)); }

// Fills a plot's colour map with [rows, cols] display cells covering n x m inputs, f per cell.
void fillMap(QCustomPlot* plot, const std::vector<double>& cells, int rows, int cols, int f, const QCPRange& range,
             const Colormap& lut) {
    QCPColorMap* map = mapOf(plot);
    QCPColorMapData* data = map->data();
    const double offset = (f - 1) / 2.0;
    data->setSize(cols, rows);
    data->setRange(QCPRange(offset, (cols - 1) * f + offset), QCPRange(offset, (rows - 1) * f + offset));
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) data->setCell(j, i, cells[static_cast<std::size_t>(i) * cols + j]);
    map->colorScale()->setGradient(gradientFromLut(lut));
    map->setGradient(map->colorScale()->gradient());
    map->setDataRange(range);
    plot->xAxis->setRange(-0.5, cols * f - 0.5);
    plot->yAxis->setRange(-0.5, rows * f - 0.5);
    replotWhenShown(plot);
}

void clearMap(QCustomPlot* plot) {
    mapOf(plot)->data()->clear();
    titleOf(plot)->setText(QString());
    replotWhenShown(plot);
}

double cellOf(QCustomPlot* plot, int query, int key) {
    QCPColorMapData* data = mapOf(plot)->data();
    if (query < 0 || key < 0 || key >= data->keySize() || query >= data->valueSize()) return kNaN;
    return data->cell(key, query);
}

QVector<double> graphValues(QCustomPlot* plot) {
    QVector<double> out;
    if (plot->graphCount() == 0) return out;
    for (auto it = plot->graph(0)->data()->constBegin(); it != plot->graph(0)->data()->constEnd(); ++it) out << it->value;
    return out;
}

QString defaultSweep(const QString& param) {
    if (param == QLatin1String("nb_features")) return QStringLiteral("8, 16, 32, 64, 128, 256, 512");
    if (param == QLatin1String("k")) return QStringLiteral("2, 4, 8, 16, 32, 64");
    return {};
}

}  // namespace

QStringList ApproximationView::approximatingVariants() {
    QStringList ids;
    for (const engine::VariantInfo& info : engine::variantCatalog())
        if (info.approximatesSoftmax) ids << QString::fromStdString(info.id);
    return ids;
}

bool ApproximationView::approximatesSoftmax(const std::string& id) {
    const engine::VariantInfo* info = engine::findVariantInfo(id);
    return info && info->approximatesSoftmax;
}

QString ApproximationView::sweepParameter(const std::string& id) {
    const engine::VariantInfo* info = engine::findVariantInfo(id);
    return info ? QString::fromStdString(info->errorSweepParam) : QString();
}

double ApproximationView::meanRowL1Error(const engine::AttentionResult& approx, const engine::AttentionResult& exact) {
    return views::meanRowL1Error(approx, exact);  // (the one definition: error_summary.h)
}

ApproximationView::ApproximationView(QWidget* parent) : ResultPage(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_info = new QLabel(this);
    m_info->setTextFormat(Qt::PlainText);
    m_info->setWordWrap(true);
    m_info->setContentsMargins(8, 4, 8, 2);
    layout->addWidget(m_info);

    m_body = new QWidget(this);
    auto* grid = new QGridLayout(m_body);
    grid->setContentsMargins(0, 0, 0, 0);
    m_impliedPlot = makeMapPlot(m_body, tr("weight"));
    m_exactPlot = makeMapPlot(m_body, tr("weight"));
    m_errorPlot = makeMapPlot(m_body, tr("implied − exact"));
    grid->addWidget(m_impliedPlot, 0, 0, 1, 2);
    grid->addWidget(m_exactPlot, 0, 2, 1, 2);
    grid->addWidget(m_errorPlot, 0, 4, 1, 2);

    m_rowPlot = new QCustomPlot(m_body);
    styleDiagnosticPlot(m_rowPlot);
    QCPGraph* rows = m_rowPlot->addGraph();
    rows->setLineStyle(QCPGraph::lsImpulse);
    rows->setPen(QPen(QColor(214, 39, 40), 2));
    m_rowPlot->xAxis->setLabel(tr("query"));
    m_rowPlot->yAxis->setLabel(tr("row L1 error Σ_j |implied − exact|"));
    grid->addWidget(m_rowPlot, 1, 0, 1, 3);

    auto* curvePanel = new QWidget(m_body);
    auto* curveLayout = new QVBoxLayout(curvePanel);
    curveLayout->setContentsMargins(0, 0, 0, 0);
    m_curvePlot = new QCustomPlot(curvePanel);
    styleDiagnosticPlot(m_curvePlot);
    QCPGraph* curve = m_curvePlot->addGraph();
    curve->setPen(QPen(QColor(31, 119, 180), 2));
    curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
    m_curvePlot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog);
    ticker->setLogBase(2);
    m_curvePlot->xAxis->setTicker(ticker);
    m_curvePlot->yAxis->setLabel(tr("mean row L1 error"));
    curveLayout->addWidget(m_curvePlot, 1);
    auto* controls = new QHBoxLayout;
    m_curveEdit = new QLineEdit(curvePanel);
    m_curveEdit->setToolTip(tr("Comma-separated values of the size parameter; one run of the variant per value, "
                               "all against one exact softmax, same seed."));
    m_curveButton = new QPushButton(tr("Compute error curve"), curvePanel);
    m_curveScale = new QCheckBox(tr("Q, K at norm d^¼"), curvePanel);
    m_curveScale->setToolTip(tr("Rescale every query and key to norm d^¼ (so |x|·d^−¼ = 1) for the curve's runs: "
                                "the regime of the FAVOR+ paper, where the error falls as 1/√features. With larger "
                                "norms (random projections give about √d) the key stabiliser grows with the number "
                                "of features and feature_eps outweighs the features."));
    controls->addWidget(m_curveEdit, 1);
    controls->addWidget(m_curveScale);
    controls->addWidget(m_curveButton);
    curveLayout->addLayout(controls);
    m_curveStatus = new QLabel(curvePanel);
    m_curveStatus->setTextFormat(Qt::PlainText);
    m_curveStatus->setWordWrap(true);
    curveLayout->addWidget(m_curveStatus);
    grid->addWidget(curvePanel, 1, 3, 1, 3);
    grid->setRowStretch(0, 3);
    grid->setRowStretch(1, 2);
    layout->addWidget(m_body, 1);
    connect(m_curveButton, &QPushButton::clicked, this, &ApproximationView::requestErrorCurve);
    connect(m_curveEdit, &QLineEdit::returnPressed, this, &ApproximationView::requestErrorCurve);
    rebuild();
}

ApproximationView::~ApproximationView() = default;

void ApproximationView::showMessage(const QString& text) {
    m_shownHead = -1;
    m_errorLimit = 0;
    for (QCustomPlot* plot : {m_impliedPlot, m_exactPlot, m_errorPlot}) clearMap(plot);
    m_rowPlot->graph(0)->data()->clear();
    replotWhenShown(m_rowPlot);
    m_info->setText(text);
    updateCurveControls();
}

void ApproximationView::rebuild() {
    const engine::AttentionResult* approx = nullptr;
    const engine::AttentionResult* exact = nullptr;
    if (m_result) {
        const auto& results = m_result->results;
        const int index = m_state ? m_state->resultIndex() : 0;
        if (index >= 0 && index < static_cast<int>(results.size()) &&
            approximatesSoftmax(results[static_cast<std::size_t>(index)].variantId))
            approx = &results[static_cast<std::size_t>(index)];
        for (const auto& r : results)
            if (!approx && approximatesSoftmax(r.variantId)) approx = &r;
        if (const int reference = engine::exactReferenceIndex(*m_result); reference >= 0)
            exact = &results[static_cast<std::size_t>(reference)];
    }
    m_approxId = approx ? QString::fromStdString(approx->variantId) : QString();
    if (m_curveParam != sweepParameter(m_approxId.toStdString())) {
        m_curveParam = sweepParameter(m_approxId.toStdString());
        m_curveEdit->setText(defaultSweep(m_curveParam));
    }
    if (!m_result) return showMessage(tr("No result yet."));
    if (!approx)
        return showMessage(tr("The approximation view compares %1 with exact softmax: choose one of them.")
                               .arg(approximatingVariants().join(tr(", "))));
    if (!exact)
        return showMessage(tr("No exact softmax in this run: the Diagnostics tab runs “full” beside %1 (press F5).")
                               .arg(m_approxId));
    if (approx->heads != exact->heads || approx->n != exact->n || approx->m != exact->m)
        return showMessage(tr("%1 and full have different shapes; run them together.").arg(m_approxId));

    const int heads = static_cast<int>(approx->heads);
    const int head = std::clamp(m_state ? m_state->head() : 0, 0, heads - 1);
    const auto n = static_cast<int>(approx->n), m = static_cast<int>(approx->m);
    const int f = (std::max(n, m) + kMaxDisplaySide - 1) / kMaxDisplaySide;
    const int rows = (n + f - 1) / f, cols = (m + f - 1) / f;
    // implied, exact, error: [rows, cols] display cells, each the entry of largest |value| of its block
    std::vector<double> implied(static_cast<std::size_t>(rows) * cols, 0.0), exactCells = implied, error = implied;
    QVector<double> queries(n), rowL1(n, 0.0);
    double impliedAbs = 0, exactMax = 0, errorAbs = 0;
    bool signedImplied = false;
    auto keep = [](double& cell, double v) {
        if (std::abs(v) > std::abs(cell)) cell = v;
    };
    for (int i = 0; i < n; ++i) {
        queries[i] = i;
        for (int j = 0; j < m; ++j) {
            const double a = approx->weightAt(head, i, j), e = exact->weightAt(head, i, j), d = a - e;
            const std::size_t c = static_cast<std::size_t>(i / f) * cols + j / f;
            keep(implied[c], a);
            keep(exactCells[c], e);
            keep(error[c], d);
            rowL1[i] += std::abs(d);
            impliedAbs = std::max(impliedAbs, std::abs(a));
            exactMax = std::max(exactMax, e);
            errorAbs = std::max(errorAbs, std::abs(d));
            signedImplied |= a < 0;
        }
    }
    m_shownHead = head;
    m_errorLimit = errorAbs > 0 ? errorAbs : 1e-12;
    // Implied and exact share one scale, so equal colours mean equal weights; signed implied
    // weights (Linformer's P̄F) need the diverging map centred at 0.
    const double hi = std::max(impliedAbs, exactMax) > 0 ? std::max(impliedAbs, exactMax) : 1.0;
    const QCPRange shared = signedImplied ? QCPRange(-hi, hi) : QCPRange(0, hi);
    const Colormap& weightMap = signedImplied ? divergingColormap() : Colormap::viridis();
    fillMap(m_impliedPlot, implied, rows, cols, f, shared, weightMap);
    fillMap(m_exactPlot, exactCells, rows, cols, f, shared, weightMap);
    fillMap(m_errorPlot, error, rows, cols, f, QCPRange(-m_errorLimit, m_errorLimit), divergingColormap());
    const QString pooled = f > 1 ? tr(" (max |value| per %1×%1 block)").arg(f) : QString();
    titleOf(m_impliedPlot)->setText(tr("%1 implied, head %2%3").arg(m_approxId).arg(head).arg(pooled));
    titleOf(m_exactPlot)->setText(tr("exact softmax (full), head %1%2").arg(head).arg(pooled));
    titleOf(m_errorPlot)->setText(tr("error: implied − exact%1").arg(pooled));

    m_rowPlot->graph(0)->setData(queries, rowL1, true);
    m_rowPlot->xAxis->setRange(-0.5, n - 0.5);
    const double rowMax = n > 0 ? *std::max_element(rowL1.begin(), rowL1.end()) : 0.0;
    m_rowPlot->yAxis->setRange(0, rowMax > 0 ? rowMax * 1.1 : 1.0);
    replotWhenShown(m_rowPlot);
    double mean = 0;
    for (double v : rowL1) mean += v;
    mean = n > 0 ? mean / n : 0.0;
    m_flatNote = explainFlatWeights(*m_result, *approx, head);
    m_info->setText(tr("%1 against exact softmax on the same Q, K, V — head %2: mean row L1 error %3, largest "
                       "|error| %4 (an L1 of 2 means disjoint rows).")
                        .arg(m_approxId)
                        .arg(head)
                        .arg(mean, 0, 'f', 4)
                        .arg(errorAbs, 0, 'g', 3) +
                    (m_flatNote.isEmpty() ? QString() : QLatin1Char(' ') + m_flatNote));
    updateCurveControls();
}

void ApproximationView::updateCurveControls() {
    const bool sweepable = !m_curveParam.isEmpty();
    m_curveButton->setEnabled(sweepable && !m_curveBusy);
    m_curveEdit->setEnabled(sweepable && !m_curveBusy);
    m_curveScale->setVisible(m_curveParam == QLatin1String("nb_features"));  // (a Performer question)
    m_curveScale->setEnabled(!m_curveBusy);
    if (!sweepable && !m_curveBusy) {
        m_curveStatus->setText(m_approxId.isEmpty() ? QString()
                                                    : tr("%1 has no size parameter to sweep.").arg(m_approxId));
    } else if (!m_curveBusy && graphValues(m_curvePlot).isEmpty()) {
        m_curveStatus->setText(tr("Error against %1: computed on request (one run per value).").arg(m_curveParam));
    }
}

void ApproximationView::requestErrorCurve() {
    if (m_curveParam.isEmpty() || m_curveBusy) return;
    QVector<double> values;
    for (const QString& part : m_curveEdit->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int v = part.trimmed().toInt(&ok);
        if (!ok || v < 1) {
            m_curveStatus->setText(tr("“%1” is not a positive integer.").arg(part.trimmed()));
            return;
        }
        if (!values.contains(v)) values << v;
    }
    if (values.isEmpty()) {
        m_curveStatus->setText(tr("Type the %1 values to try, e.g. %2.").arg(m_curveParam, defaultSweep(m_curveParam)));
        return;
    }
    std::sort(values.begin(), values.end());
    m_curveQkNorm = m_curveScale->isVisible() && m_curveScale->isChecked() && m_result && m_result->headDim > 0
                        ? std::pow(static_cast<double>(m_result->headDim), 0.25)
                        : 0.0;
    m_curveBusy = true;
    m_curveStatus->setText(tr("Computing %1 runs of %2 against exact softmax… (Esc cancels)")
                               .arg(values.size())
                               .arg(m_approxId));
    updateCurveControls();
    Q_EMIT errorCurveRequested(m_approxId, m_curveParam, values, m_curveQkNorm);
}

void ApproximationView::setErrorCurve(const QString& variantId, const QString& paramName, const QVector<double>& values,
                                      const QVector<double>& errors) {
    m_curveBusy = false;
    m_curvePlot->graph(0)->setData(values, errors);
    m_curvePlot->xAxis->setLabel(tr("%1 of %2 (log scale)").arg(paramName, variantId));
    if (!values.isEmpty()) {
        m_curvePlot->xAxis->setRange(values.first() / 1.5, values.last() * 1.5);
        double top = 0;
        for (double e : errors)
            if (std::isfinite(e)) top = std::max(top, e);
        m_curvePlot->yAxis->setRange(0, top > 0 ? top * 1.15 : 1.0);
    }
    replotWhenShown(m_curvePlot);
    QStringList points;
    for (int i = 0; i < values.size() && i < errors.size(); ++i)
        points << QStringLiteral("%1: %2").arg(values[i]).arg(errors[i], 0, 'f', 4);
    m_curveStatus->setText(tr("Mean row L1 error of %1 by %2%3 — %4")
                               .arg(variantId, paramName,
                                    m_curveQkNorm > 0 ? tr(" (Q, K at norm %1)").arg(m_curveQkNorm, 0, 'f', 2) : QString(),
                                    points.join(QStringLiteral(", "))));
    updateCurveControls();
}

void ApproximationView::setErrorCurveFailed(const QString& message) {
    m_curveBusy = false;
    m_curveStatus->setText(tr("Error curve not computed: %1").arg(message));
    updateCurveControls();
}

QString ApproximationView::message() const { return m_shownHead < 0 ? m_info->text() : QString(); }

QSize ApproximationView::dataSize() const {
    QCPColorMapData* data = mapOf(m_errorPlot)->data();
    return m_shownHead < 0 ? QSize() : QSize(data->keySize(), data->valueSize());
}

double ApproximationView::impliedCell(int query, int key) const { return cellOf(m_impliedPlot, query, key); }
double ApproximationView::exactCell(int query, int key) const { return cellOf(m_exactPlot, query, key); }
double ApproximationView::errorCell(int query, int key) const { return cellOf(m_errorPlot, query, key); }
double ApproximationView::errorRangeLimit() const { return mapOf(m_errorPlot)->dataRange().upper; }
QVector<double> ApproximationView::rowL1Errors() const { return graphValues(m_rowPlot); }
QVector<double> ApproximationView::curveValues() const {
    QVector<double> out;
    for (auto it = m_curvePlot->graph(0)->data()->constBegin(); it != m_curvePlot->graph(0)->data()->constEnd(); ++it)
        out << it->key;
    return out;
}
QVector<double> ApproximationView::curveErrors() const { return graphValues(m_curvePlot); }
QString ApproximationView::curveStatus() const { return m_curveStatus->text(); }

}  // namespace attnscope::views
