#include "views/head_heatmap.h"

#include "views/colormap.h"
#include "views/inspection_state.h"
#include "views/qcp.h"
#include "views/token_label.h"

#include <QLoggingCategory>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

Q_LOGGING_CATEGORY(lcHeatmap, "attnscope.views.heatmap", QtInfoMsg)

namespace {

QCPColorGradient gradientFrom(const Colormap& lut) {
    // FORMATS.md §5: one stop per LUT entry and as many levels, so level i is exactly entry i.
    QMap<double, QColor> stops;
    const int last = std::max(lut.size() - 1, 1);
    for (int i = 0; i < lut.size(); ++i) stops.insert(static_cast<double>(i) / last, QColor(lut.color(i)));
    QCPColorGradient gradient;
    gradient.setColorStops(stops);
    gradient.setLevelCount(lut.size());
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setNanHandling(QCPColorGradient::nhNanColor);
    gradient.setNanColor(QColor(200, 200, 200));
    return gradient;
}

void styleAxis(QCPAxis* axis, const QColor& fg, const QFont& labelFont) {
    axis->setBasePen(QPen(fg));
    axis->setTickPen(QPen(fg));
    axis->setSubTickPen(QPen(fg));
    axis->setTickLabelColor(fg);
    axis->setLabelColor(fg);
    axis->setLabelFont(labelFont);
    axis->grid()->setVisible(false);
}

}  // namespace

HeadHeatmap::HeadHeatmap(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    layout->addWidget(m_plot);

    // Scientific figures go on the base colour (white in light themes); axes follow the palette.
    const QColor fg = palette().color(QPalette::Text);
    m_plot->setBackground(palette().brush(QPalette::Base));
    QFont labelFont = font();
    labelFont.setPointSizeF(std::max(9.0, labelFont.pointSizeF()));

    // Layout: the title above a body grid whose middle row holds the matrix and its colour bar;
    // the empty outer rows and columns take what the square matrix leaves over, so cells stay
    // square and the pair stays centred (see fitAxisRect()).
    QFont titleFont = font();
    titleFont.setPointSizeF(std::max(11.0, titleFont.pointSizeF() + 1));
    titleFont.setBold(true);
    m_title = new QCPTextElement(m_plot, QString(), titleFont);
    m_title->setTextColor(fg);
    QCPAxisRect* rect = m_plot->axisRect();
    m_plot->plotLayout()->take(rect);
    m_plot->plotLayout()->simplify();
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_body = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, m_body);
    m_body->addElement(1, 1, rect);
    rect->setSizeConstraintRect(QCPLayoutElement::scrInnerRect);

    m_colorMap = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_colorMap->setInterpolate(false);
    m_colorMap->setTightBoundary(true);

    m_colorScale = new QCPColorScale(m_plot);
    m_body->addElement(1, 2, m_colorScale);
    m_body->expandTo(3, 4);
    constexpr double kSpacerStretch = 1e-6;  // spacers only get what the capped cells leave
    m_body->setColumnStretchFactors({kSpacerStretch, 1.0, 1.0, kSpacerStretch});
    m_body->setRowStretchFactors({kSpacerStretch, 1.0, kSpacerStretch});
    m_colorScale->setType(QCPAxis::atRight);
    m_colorScale->setBarWidth(14);
    m_colorScale->axis()->setLabel(tr("attention weight"));
    styleAxis(m_colorScale->axis(), fg, labelFont);
    m_colorMap->setColorScale(m_colorScale);
    // NOTE: after setColorScale: linking makes the map adopt the scale's gradient (gpCold).
    m_colorScale->setGradient(gradientFrom(Colormap::viridis()));
    m_colorMap->setGradient(m_colorScale->gradient());
    m_marker = new QCPItemRect(m_plot);
    m_marker->setPen(QPen(QColor(255, 64, 64), 2.0));  // red stays visible on every viridis colour
    m_marker->setBrush(Qt::NoBrush);
    m_marker->setVisible(false);
    auto* margins = new QCPMarginGroup(m_plot);
    rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_colorScale->setMarginGroup(QCP::msTop | QCP::msBottom, margins);

    styleAxis(m_plot->xAxis, fg, labelFont);
    styleAxis(m_plot->yAxis, fg, labelFont);
    m_plot->xAxis->setLabel(tr("key"));
    m_plot->yAxis->setLabel(tr("query"));
    m_plot->yAxis->setRangeReversed(true);  // query 0 on top, as matrices are read
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);

    connect(m_plot, &QCustomPlot::mouseMove, this, &HeadHeatmap::onPlotMouseMove);
    connect(m_plot, &QCustomPlot::afterLayout, this, &HeadHeatmap::fitAxisRect);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] {
        fitRanges();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    // Keyboard focus lands on the plot, so window shortcuts (PgUp/PgDn) work after a click on it.
    m_plot->setFocusPolicy(Qt::StrongFocus);
    setFocusProxy(m_plot);
    m_plot->installEventFilter(this);
    m_plot->setMouseTracking(true);
    rebuild();
}

HeadHeatmap::~HeadHeatmap() = default;

void HeadHeatmap::setInspectionState(InspectionState* state) {
    if (m_state) disconnect(m_state, nullptr, this, nullptr);
    m_state = state;
    if (state) {
        connect(state, &InspectionState::headChanged, this, &HeadHeatmap::rebuild);
        connect(state, &InspectionState::resultIndexChanged, this, &HeadHeatmap::rebuild);
    }
    rebuild();
}

void HeadHeatmap::setResult(std::shared_ptr<const engine::RunResult> result) {
    m_result = std::move(result);
    rebuild();
}

void HeadHeatmap::setVariantNames(const QHash<QString, QString>& idToName) {
    m_variantNames = idToName;
    rebuild();
}

const engine::AttentionResult* HeadHeatmap::shownResult() const {
    if (!m_result) return nullptr;
    const int index = m_state ? m_state->resultIndex() : 0;
    if (index < 0 || index >= static_cast<int>(m_result->results.size())) return nullptr;
    return &m_result->results[static_cast<std::size_t>(index)];
}

void HeadHeatmap::rebuild() {
    clearHover();
    m_markedQuery = m_markedKey = -1;
    m_marker->setVisible(false);
    const engine::AttentionResult* r = shownResult();
    const int head = m_state ? m_state->head() : 0;
    QCPColorMapData* data = m_colorMap->data();
    if (!r || head < 0 || head >= r->heads || r->n <= 0 || r->m <= 0) {
        m_shownHead = -1;
        m_matrix = HeadMatrix();
        data->clear();
        m_colorMap->setVisible(false);
        m_title->setText(m_result ? tr("No head to show") : tr("No result yet: press Run (F5)"));
        m_tokenAxes = false;
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    m_shownHead = head;
    m_matrix = HeadMatrix::fromResult(*r, head);
    const int rows = m_matrix.rows(), cols = m_matrix.cols(), f = m_matrix.poolFactor();
    // Cell centres sit on input indices (the middle of the block when pooled).
    const double offset = (f - 1) / 2.0;
    data->setSize(cols, rows);
    data->setRange(QCPRange(offset, (cols - 1) * f + offset), QCPRange(offset, (rows - 1) * f + offset));
    data->clearAlpha();
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int q = 0; q < rows; ++q) {
        for (int k = 0; k < cols; ++k) {
            const float v = m_matrix.at(q, k);
            data->setCell(k, q, v);
            // Keys outside the pattern stay 0 in the data (as weightAt says) but are drawn blank,
            // so they differ from attended keys whose weight is ~0 (FORMATS.md §5).
            if (!m_matrix.inPattern(q, k)) data->setAlpha(k, q, 0);
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
    }
    // Weights are >= 0 for softmax-like variants: anchor the scale at 0 unless some are negative.
    lo = std::isfinite(lo) ? std::min(lo, 0.0f) : 0.0f;
    if (!(hi > lo)) hi = lo + 1.0f;
    m_colorMap->setDataRange(m_rangeHi > m_rangeLo ? QCPRange(m_rangeLo, m_rangeHi) : QCPRange(lo, hi));
    m_colorScale->axis()->setLabel(m_matrix.hasMaskedCells() ? tr("attention weight (blank: key not in pattern)")
                                                             : tr("attention weight"));
    m_colorMap->setVisible(true);
    updateAxes(r->n, r->m);

    const QString id = QString::fromStdString(r->variantId);
    QString name = m_variantNames.value(id, id);
    QStringList params;
    for (const auto& [key, value] : r->params)
        params << QString::fromStdString(key) + QLatin1Char('=') + QString::fromStdString(engine::formatParamValue(value));
    const QString tokenizer = m_result->input.tokens.empty() ? tr("positions") : QString::fromLatin1(engine::tokenizerName(m_result->input.kind));
    QString text = m_titlePrefix + tr("%1 — head %2 of %3 — n = %4 %5").arg(name).arg(head).arg(r->heads).arg(r->n).arg(tokenizer);
    if (f > 1) text += tr(" — max-pooled %1×%1").arg(f);
    if (!m_matrix.hasWeights()) text += tr(" — weights not kept");
    // Parameters on a line of their own, so long lists do not set the window's minimum width.
    if (!params.isEmpty()) text += QLatin1Char('\n') + params.join(QStringLiteral(", "));
    m_title->setText(text);
    qCDebug(lcHeatmap) << "showing head" << head << "of" << id << rows << "x" << cols;
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::updateAxes(std::int64_t n, std::int64_t m) {
    const auto& tokens = m_result->input.tokens;
    m_tokenAxes = poolFactor() == 1 && n <= kMaxTokenTicks && m <= kMaxTokenTicks &&
                  static_cast<std::int64_t>(tokens.size()) == n && n == m;
    QFont tickFont = font();
    if (m_tokenAxes) {
        tickFont.setPointSizeF(std::max(7.0, std::min(9.0, 9.0 - (n - 32) / 16.0)));
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (std::int64_t i = 0; i < n; ++i) ticker->addTick(static_cast<double>(i), tokenText(i));
        m_plot->xAxis->setTicker(ticker);
        m_plot->yAxis->setTicker(ticker);
        m_plot->xAxis->setTickLabelRotation(-90);
        m_plot->xAxis->setSubTicks(false);
        m_plot->yAxis->setSubTicks(false);
        m_plot->xAxis->setLabel(tr("key token"));
        m_plot->yAxis->setLabel(tr("query token"));
    } else {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);  // integer indices only
        m_plot->xAxis->setTicker(ticker);
        m_plot->yAxis->setTicker(ticker);
        m_plot->xAxis->setTickLabelRotation(0);
        m_plot->xAxis->setSubTicks(false);
        m_plot->yAxis->setSubTicks(false);
        m_plot->xAxis->setLabel(tr("key index"));
        m_plot->yAxis->setLabel(tr("query index"));
    }
    m_plot->xAxis->setTickLabelFont(tickFont);
    m_plot->yAxis->setTickLabelFont(tickFont);
    fitRanges();
}

void HeadHeatmap::fitRanges() {
    const engine::AttentionResult* r = shownResult();
    const bool shown = r && m_shownHead >= 0;
    m_plot->xAxis->setRange(-0.5, shown ? static_cast<double>(r->m) - 0.5 : 0.5);
    m_plot->yAxis->setRange(-0.5, shown ? static_cast<double>(r->n) - 0.5 : 0.5);
}

void HeadHeatmap::fitAxisRect() {
    // Runs after each layout pass: caps the matrix's inner rect so cells are square, then lets
    // one more (queued) replot apply it. Margins hardly depend on the size, so this settles at once.
    QCPAxisRect* rect = m_plot->axisRect();
    const engine::AttentionResult* r = shownResult();
    QSize cap(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX);
    if (r && m_shownHead >= 0) {
        const QRect body = m_body->rect();
        const int marginW = rect->outerRect().width() - rect->rect().width();
        const int marginH = rect->outerRect().height() - rect->rect().height();
        const int availW = body.width() - m_colorScale->outerRect().width() - 3 * m_body->columnSpacing() - marginW;
        const int availH = body.height() - 2 * m_body->rowSpacing() - marginH;
        if (availW <= 0 || availH <= 0) return;
        const double cell = std::min(static_cast<double>(availW) / r->m, static_cast<double>(availH) / r->n);
        cap = QSize(std::max(1, static_cast<int>(cell * r->m)), std::max(1, static_cast<int>(cell * r->n)));
    }
    const QSize old = rect->maximumSize();
    if (std::abs(old.width() - cap.width()) <= 2 && std::abs(old.height() - cap.height()) <= 2) return;
    rect->setMaximumSize(cap);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::setTitlePrefix(const QString& prefix) {
    m_titlePrefix = prefix;
    rebuild();
}

void HeadHeatmap::setValueRange(double lo, double hi) {
    m_rangeLo = lo;
    m_rangeHi = hi;
    if (hi > lo && m_shownHead >= 0) {
        m_colorMap->setDataRange(QCPRange(lo, hi));
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    } else {
        rebuild();
    }
}

void HeadHeatmap::setMarkedCell(int query, int key) {
    const engine::AttentionResult* r = shownResult();
    const bool valid = r && m_shownHead >= 0 && query >= 0 && key >= 0 && query < r->n && key < r->m;
    m_markedQuery = valid ? query : -1;
    m_markedKey = valid ? key : -1;
    m_marker->setVisible(valid);
    if (valid) {
        m_marker->topLeft->setCoords(key - 0.5, query - 0.5);
        m_marker->bottomRight->setCoords(key + 0.5, query + 0.5);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

const QCPColorMapData* HeadHeatmap::colorData() const { return m_colorMap->data(); }

QSize HeadHeatmap::dataSize() const {
    if (m_shownHead < 0) return {};
    return {m_colorMap->data()->keySize(), m_colorMap->data()->valueSize()};
}

double HeadHeatmap::cellValue(int query, int key) const {
    const QSize size = dataSize();
    if (query < 0 || key < 0 || query >= size.height() || key >= size.width())
        return std::numeric_limits<double>::quiet_NaN();
    return m_colorMap->data()->cell(key, query);
}

QString HeadHeatmap::title() const { return m_title->text(); }

QString HeadHeatmap::tokenText(std::int64_t index) const {
    if (!m_result) return {};
    const auto& tokens = m_result->input.tokens;
    if (index < 0 || index >= static_cast<std::int64_t>(tokens.size())) return {};
    return tokenLabel(tokens[static_cast<std::size_t>(index)].text, 24);
}

QString HeadHeatmap::hoverText(int query, int key) const {
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0 || query < 0 || key < 0 || query >= r->n || key >= r->m) return {};
    auto describe = [this](const QString& role, int index) {
        const QString token = tokenText(index);
        return token.isEmpty() ? QStringLiteral("%1 %2").arg(role).arg(index)
                               : QStringLiteral("%1 %2 '%3'").arg(role).arg(index).arg(token);
    };
    const int f = poolFactor();
    const double w = m_matrix.at(query / f, key / f);
    const bool attended = m_matrix.inPattern(query / f, key / f);
    if (f == 1 && !attended)
        return tr("%1 → %2: not in the pattern").arg(describe(tr("query"), query), describe(tr("key"), key));
    if (f == 1)
        return QStringLiteral("%1 → %2: weight %3")
            .arg(describe(tr("query"), query), describe(tr("key"), key))
            .arg(w, 0, 'f', 4);
    const int q0 = query / f * f, k0 = key / f * f;
    const int q1 = std::min<int>(q0 + f, r->n) - 1, k1 = std::min<int>(k0 + f, r->m) - 1;
    return tr("queries %1–%2 → keys %3–%4: max weight %5").arg(q0).arg(q1).arg(k0).arg(k1).arg(w, 0, 'f', 4);
}

void HeadHeatmap::onPlotMouseMove(QMouseEvent* event) {
    const QPointF pos = event->position();
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0 || !m_plot->axisRect()->rect().contains(pos.toPoint())) {
        clearHover();
        return;
    }
    const int key = static_cast<int>(std::floor(m_plot->xAxis->pixelToCoord(pos.x()) + 0.5));
    const int query = static_cast<int>(std::floor(m_plot->yAxis->pixelToCoord(pos.y()) + 0.5));
    if (query < 0 || key < 0 || query >= r->n || key >= r->m) {
        clearHover();
        return;
    }
    if (query == m_hoverQuery && key == m_hoverKey) return;
    m_hoverQuery = query;
    m_hoverKey = key;
    Q_EMIT cellHovered(query, key);
    // Tokens are untrusted: escape them and force rich text, which QToolTip would otherwise guess.
    const QString html = QStringLiteral("<p style='white-space:pre'>%1</p>").arg(hoverText(query, key).toHtmlEscaped());
    QToolTip::showText(event->globalPosition().toPoint(), html, m_plot);
}

void HeadHeatmap::clearHover() {
    if (m_hoverQuery < 0 && m_hoverKey < 0) return;
    m_hoverQuery = m_hoverKey = -1;
    QToolTip::hideText();
    Q_EMIT cellHovered(-1, -1);
}

bool HeadHeatmap::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::Leave) clearHover();
    return QWidget::eventFilter(watched, event);
}

}  // namespace attnscope::views
