#include "views/heatmap/head_heatmap.h"

#include "views/data/colormap.h"
#include "views/data/inspection_state.h"
#include "views/data/param_text.h"
#include "views/widgets/qcp.h"
#include "views/widgets/matrix_plot.h"
#include "views/data/title_wrap.h"
#include "views/data/token_label.h"

#include <attnscope/variant_catalog.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLoggingCategory>
#include <QProgressBar>
#include <QTimer>
#include <QToolButton>
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

}  // namespace

QCustomPlot* HeadHeatmap::plot() const { return m_plot; }

void HeadHeatmap::setEmptyMessage(const QString& message) {
    m_emptyMessage = message;
    if (!result()) rebuild();
}

void HeadHeatmap::setColorBarShown(bool shown) { m_plot->setColorBarShown(shown); }

bool HeadHeatmap::colorBarShown() const { return m_plot->colorBarShown(); }

HeadHeatmap::HeadHeatmap(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    buildToolbar();
    layout->addWidget(m_toolbar);
    m_plot = new MatrixPlot(MatrixPlot::ColorBar::Right, this);
    layout->addWidget(m_plot, 1);
    m_title = m_plot->titleElement();
    m_colorMap = m_plot->colorMap();
    m_colorScale = m_plot->colorScale();
    m_colorScale->axis()->setLabel(tr("attention weight"));
    // NOTE: after setColorScale (MatrixPlot): linking makes the map adopt the scale's gradient (gpCold).
    m_colorScale->setGradient(gradientFrom(Colormap::viridis()));
    m_colorMap->setGradient(m_colorScale->gradient());
    m_marker = new QCPItemRect(m_plot);
    m_marker->setPen(QPen(QColor(255, 64, 64), 2.0));  // red stays visible on every viridis colour
    m_marker->setBrush(Qt::NoBrush);
    m_marker->setVisible(false);
    m_plot->xAxis->setLabel(tr("key"));
    m_plot->yAxis->setLabel(tr("query"));

    connect(m_plot, &QCustomPlot::mouseMove, this, &HeadHeatmap::onPlotMouseMove);
    connect(m_plot, &QCustomPlot::afterLayout, this, &HeadHeatmap::fitAxisRect);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, &HeadHeatmap::resetZoom);
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &HeadHeatmap::onRangeChanged);
    connect(m_plot->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &HeadHeatmap::onRangeChanged);
    // Wheel zoom and drag fire many range changes; the full-resolution region follows once they pause.
    m_lodTimer = new QTimer(this);
    m_lodTimer->setSingleShot(true);
    m_lodTimer->setInterval(40);
    connect(m_lodTimer, &QTimer::timeout, this, &HeadHeatmap::updateLevelOfDetail);
    // Keyboard focus lands on the plot, so window shortcuts (PgUp/PgDn) work after a click on it.
    m_plot->setFocusPolicy(Qt::StrongFocus);
    setFocusProxy(m_plot);
    m_plot->installEventFilter(this);
    m_plot->setMouseTracking(true);
    rebuild();
}

HeadHeatmap::~HeadHeatmap() = default;

void HeadHeatmap::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { rebuild(); });
}

void HeadHeatmap::setResult(std::shared_ptr<const engine::RunResult> result) {
    m_source.setResult(std::move(result));
    rebuild();
}

void HeadHeatmap::setVariantNames(const QHash<QString, QString>& idToName) {
    m_variantNames = idToName;
    rebuild();
}

const engine::AttentionResult* HeadHeatmap::shownResult() const {
    if (!result()) return nullptr;
    const int index = m_state ? m_state->resultIndex() : 0;
    if (index < 0 || index >= static_cast<int>(result()->results.size())) return nullptr;
    return &result()->results[static_cast<std::size_t>(index)];
}

void HeadHeatmap::rebuild() {
    clearHover();
    m_markedQuery = m_markedKey = -1;
    m_marker->setVisible(false);
    m_lodTimer->stop();
    const engine::AttentionResult* r = shownResult();
    const int head = m_state ? m_state->head() : 0;
    if (!r || head < 0 || head >= r->heads || r->n <= 0 || r->m <= 0) {
        cancelPooling();
        m_shownHead = -1;
        m_pooled.reset();
        m_shown.reset();
        // NOTE: the cells stay allocated while hidden: a 2048² map is 32 MB of doubles, and
        // allocating it afresh for the next result faulted in every page, slowing the next show.
        m_colorMap->setVisible(false);
        showAxesAndColorBar(false);  // (empty axes under a 0–6 colour bar read as data)
        m_title->setText(result() ? tr("No head to show") : m_emptyMessage.isEmpty() ? tr("No result yet: press Run (F5)") : m_emptyMessage);
        m_keyTokens = m_queryTokens = false;
        refreshHighlight();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const PoolMode mode = poolModeFor(*r);
    if (m_source.poolsInBackground(keyOf(head, mode))) {
        startPooling(head, mode);
        return;
    }
    cancelPooling();
    // Another head of the same result (PgDn) keeps the zoom: one compares heads at the same place.
    const bool sameResult = m_pooled && m_shownHead >= 0 && m_shownSerial == m_source.serial();
    showHead(head, m_source.poolNow(keyOf(head, mode)), sameResult);
    qCDebug(lcHeatmap) << "showing head" << head << "of" << r->variantId.c_str() << m_pooled->rows() << "x"
                       << m_pooled->cols();
}

void HeadHeatmap::showMatrix(std::shared_ptr<const HeadMatrix> matrix) {
    m_shown = std::move(matrix);
    const HeadMatrix& mx = *m_shown;
    const int rows = mx.rows(), cols = mx.cols(), f = mx.poolFactor();
    // Cell centres sit on input indices (the middle of the block when pooled).
    const double offset = (f - 1) / 2.0;
    const double k0 = static_cast<double>(mx.colOffset()) + offset, q0 = static_cast<double>(mx.rowOffset()) + offset;
    QCPColorMapData* data = m_colorMap->data();
    data->setSize(cols, rows);
    data->setRange(QCPRange(k0, k0 + (cols - 1) * f), QCPRange(q0, q0 + (rows - 1) * f));
    data->clearAlpha();
    // Keys outside the pattern keep weightAt's 0 in the data but are drawn blank, so they differ
    // from attended keys whose weight is ~0 (FORMATS.md §5).
    if (mx.hasMaskedCells() && rows > 0 && cols > 0) {
        data->setAlpha(0, 0, 255);  // allocates the alpha map, all opaque
        if (unsigned char* alpha = ColorMapDataAccess::alpha(*data)) {
            for (int q = 0; q < rows; ++q)
                for (int k = 0; k < cols; ++k)
                    alpha[static_cast<std::size_t>(q) * cols + k] = mx.inPattern(q, k) ? 255 : 0;
        }
    }
    applyColors();
    updateTitle();
    refreshHighlight();
}

void HeadHeatmap::setHighlightedTokens(const QVector<int>& tokens) {
    m_highlighted = tokens;
    refreshHighlight();
}

void HeadHeatmap::refreshHighlight() {
    const engine::AttentionResult* r = shownResult();
    const bool shown = r && m_shownHead >= 0;
    m_highlight.show(m_plot, shown ? m_highlighted : QVector<int>{}, shown ? r->n : 0, shown ? r->m : 0);
}

void HeadHeatmap::applyColors() {
    if (!m_shown || !m_pooled) return;
    const HeadMatrix& mx = *m_shown;
    // Sign and range come from the whole head, so zooming in does not change the colours.
    const bool fixed = m_rangeHi > m_rangeLo;
    const bool signedData = m_pooled->minValue() < 0.0f || (fixed && m_rangeLo < 0.0);
    double lo = fixed ? m_rangeLo : std::min(0.0, static_cast<double>(m_pooled->minValue()));
    double hi = fixed ? m_rangeHi : m_pooled->maxValue();
    if (!(hi > lo)) hi = lo + 1.0;
    m_shownColormap = signedData ? QStringLiteral("rdbu") : m_options.colormap;
    if (signedData) {
        // Diverging: centred at 0 with a symmetric range (FORMATS.md §5).
        const double a = std::max({std::abs(lo), std::abs(hi), static_cast<double>(std::abs(m_pooled->minValue()))});
        lo = -a;
        hi = a;
    }
    m_logShown = m_options.scale == ColorScale::Log && !signedData && hi > 0.0;
    m_logFloor = 0.0;
    if (m_logShown) {
        const double floorValue = std::max(static_cast<double>(m_pooled->minPositive()), hi * kLogFloorRatio);
        m_logFloor = fixed && m_rangeLo > 0.0 ? std::max(m_rangeLo, floorValue) : floorValue;
        lo = m_logFloor;
        if (!(hi > lo)) hi = lo * 10.0;
    }
    QCPColorMapData* data = m_colorMap->data();
    const int rows = mx.rows(), cols = mx.cols();
    // Cells are row-major [query][key] in both, so the values go over in one pass.
    if (double* cells = ColorMapDataAccess::cells(*data);
        cells && data->keySize() == cols && data->valueSize() == rows) {
        const float* values = mx.values().data();
        const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
        if (m_logShown) {
            // Log: zeros would be -inf; they are drawn at the floor, as the legend says.
            const double floorValue = m_logFloor;
            for (std::size_t i = 0; i < count; ++i) {
                const double v = values[i];
                cells[i] = !(v >= floorValue) && !std::isnan(v) ? floorValue : v;
            }
        } else {
            std::copy(values, values + count, cells);
        }
        ColorMapDataAccess::markModified(
            *data, QCPRange(std::min<double>(mx.minValue(), m_logShown ? m_logFloor : mx.minValue()), mx.maxValue()));
    }
    const QCPColorGradient gradient = gradientFrom(Colormap::builtin(m_shownColormap));
    m_colorScale->setGradient(gradient);
    m_colorMap->setGradient(gradient);
    const auto scaleType = m_logShown ? QCPAxis::stLogarithmic : QCPAxis::stLinear;
    m_colorScale->setDataScaleType(scaleType);
    m_colorMap->setDataScaleType(scaleType);
    if (m_logShown) {
        m_colorScale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        m_colorScale->axis()->setNumberFormat(QStringLiteral("eb"));
        m_colorScale->axis()->setNumberPrecision(0);
    } else {
        m_colorScale->axis()->setTicker(QSharedPointer<QCPAxisTicker>::create());
        m_colorScale->axis()->setNumberFormat(QStringLiteral("gb"));
        m_colorScale->axis()->setNumberPrecision(4);
    }
    m_colorMap->setDataRange(QCPRange(lo, hi));
    m_colorScale->axis()->setLabel(colorBarLabel());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString HeadHeatmap::colorBarLabel() const {
    if (!m_shown) return tr("attention weight");
    QStringList parts;
    const int f = m_shown->poolFactor();
    if (f > 1)
        parts << (m_shown->poolMode() == PoolMode::Mean ? tr("mean of %1×%1 blocks") : tr("max of %1×%1 blocks")).arg(f);
    else if (showsRegion())
        parts << tr("zoomed: full resolution");
    if (m_logShown) parts << tr("log, zeros at %1").arg(m_logFloor, 0, 'g', 2);
    else if (m_options.scale == ColorScale::Log && m_shownColormap == QLatin1String("rdbu"))
        parts << tr("signed: linear");
    if (m_shown->hasMaskedCells()) parts << tr("blank: key not in pattern");
    // A compact pane is too short for the qualifiers (they ran into its title): they are in
    // the full title's tooltip and in the compare view's legend line.
    if (m_compactTitle) return tr("attention weight");
    return parts.isEmpty() ? tr("attention weight") : tr("attention weight (%1)").arg(parts.join(QStringLiteral("; ")));
}

std::pair<double, double> HeadHeatmap::colorRange() const {
    const QCPRange r = m_colorMap->dataRange();
    return {r.lower, r.upper};
}

void HeadHeatmap::updateTitle() {
    const engine::AttentionResult* r = shownResult();
    if (!r) return;
    const QString name = resultName(*result(), static_cast<std::size_t>(m_state ? m_state->resultIndex() : 0), m_variantNames);
    if (!m_pooled) {
        if (isPooling())
            m_title->setText(m_titlePrefix + tr("%1 — pooling head %2 of %3 for display (n = %4): %5 %…")
                                                 .arg(name)
                                                 .arg(poolingHead())
                                                 .arg(r->heads)
                                                 .arg(r->n)
                                                 .arg(poolingPercent()));
        else if (stoppedHead() >= 0)
            m_title->setText(m_titlePrefix + tr("%1 — pooling of head %2 stopped: “Pool head %2” draws it")
                                                 .arg(name)
                                                 .arg(stoppedHead()));
        return;
    }
    QStringList params, changed;
    const engine::VariantInfo* info = engine::findVariantInfo(r->variantId);
    if ((m_state ? m_state->resultIndex() : 0) == result()->ownAttention) {
        // the layer's own attention: what it is in words, not the settings of its computation
        params << QString::fromStdString(result()->ownAttentionSummary);
    } else {
        for (const auto& [key, value] : r->params) {
            const QString item = paramAssignment(key, value);
            params << item;
            const engine::ParamSpec* spec = info ? info->findParam(key) : nullptr;
            if (!spec || !(spec->defaultValue == value)) changed << item;
        }
    }
    const QString tokenizer = tokenUnit(result()->input);
    QString text = m_titlePrefix + tr("%1 — head %2 of %3 — n = %4 %5").arg(name).arg(m_shownHead).arg(r->heads).arg(r->n).arg(tokenizer);
    if (const QString source = qkvSourceText(*result()); !source.isEmpty()) text += QStringLiteral(" — ") + source;
    const int f = m_pooled->poolFactor();
    if (showsRegion()) text += tr(" — zoomed region at full resolution");
    else if (f > 1) text += (m_pooled->poolMode() == PoolMode::Mean ? tr(" — mean-pooled %1×%1") : tr(" — max-pooled %1×%1")).arg(f);
    if (!m_pooled->hasWeights()) text += tr(" — weights not kept");
    if (isPooling()) text += tr(" — pooling head %1: %2 %…").arg(poolingHead()).arg(poolingPercent());
    else if (stoppedHead() >= 0) text += tr(" — pooling of head %1 stopped").arg(stoppedHead());
    // Parameters on a line of their own, so long lists do not set the window's minimum width.
    if (!params.isEmpty()) text += QLatin1Char('\n') + params.join(QStringLiteral(", "));
    m_fullTitle = text + QLatin1Char('\n') + colorBarLabel();
    if (m_compactTitle) {
        // The display name while it fits, else the short variant id ("bigbird (pad=true)").
        const QFontMetrics metrics(m_title->font());
        const int room = std::max(40, m_plot->width() - 12);
        const QString settings = changed.join(QStringLiteral(", "));
        QString compact;
        for (const QString& who : {name, QString::fromStdString(r->variantId)}) {
            compact = m_titlePrefix + (settings.isEmpty() ? who : tr("%1 (%2)").arg(who, settings));
            if (metrics.horizontalAdvance(compact) <= room) break;
        }
        m_title->setText(metrics.elidedText(compact, Qt::ElideRight, room));
        return;
    }
    m_title->setText(wrapTitle(text, m_title->font(), m_plot->width() - 12));
}

void HeadHeatmap::updateAxes() {
    m_plot->xAxis->setSubTicks(false);
    m_plot->yAxis->setSubTicks(false);
    fitRanges();
    updateTickLabels();
}

void HeadHeatmap::updateTickLabels() {
    const engine::AttentionResult* r = shownResult();
    const auto& tokens = result() ? result()->input.tokens : std::vector<engine::Token>{};
    const auto count = static_cast<std::int64_t>(tokens.size());
    auto visible = [](QCPAxis* axis) { return axis->range().size(); };
    // Token text only where it can be read: at most kMaxTokenTicks cells visible, full resolution.
    const bool fullRes = poolFactor() == 1;
    const bool keyTokens = r && m_shownHead >= 0 && fullRes && count == r->m && visible(m_plot->xAxis) <= kMaxTokenTicks + 0.5;
    const bool queryTokens = r && m_shownHead >= 0 && fullRes && count == r->n && visible(m_plot->yAxis) <= kMaxTokenTicks + 0.5;
    auto setup = [&](QCPAxis* axis, bool useTokens, const QString& tokenLabel, const QString& indexLabel) {
        QFont tickFont = font();
        if (useTokens) {
            const QCPRange range = axis->range();
            const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil(range.lower)));
            const auto last = std::min<std::int64_t>(count - 1, static_cast<std::int64_t>(std::floor(range.upper)));
            const double shown = static_cast<double>(last - first + 1);
            tickFont.setPointSizeF(std::max(7.0, std::min(9.0, 9.0 - (shown - 32) / 16.0)));
            // Every token whose label has room (a line of text per label); otherwise every
            // step-th, at multiples of the step so labels stay put while panning.
            const double pixels = axis->orientation() == Qt::Horizontal ? axis->axisRect()->width() : axis->axisRect()->height();
            const int step = tokenLabelStep(pixels, range.size(), tickFont);
            (axis == m_plot->xAxis ? m_keyLabelStep : m_queryLabelStep) = step;
            auto ticker = QSharedPointer<QCPAxisTickerText>::create();
            for (std::int64_t i = first; i <= last; ++i)
                if (i % step == 0) ticker->addTick(static_cast<double>(i), tokenText(i));
            axis->setTicker(ticker);
            // Say that labels were left out, or a reader takes the shown ones for neighbours.
            axis->setLabel(step > 1 ? tr("%1 (1 in %2 labelled)").arg(tokenLabel).arg(step) : tokenLabel);
        } else {
            auto ticker = qSharedPointerDynamicCast<QCPAxisTickerFixed>(axis->ticker());
            if (!ticker) {
                ticker = QSharedPointer<QCPAxisTickerFixed>::create();
                ticker->setTickStep(1.0);
                ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);  // integer indices only
                axis->setTicker(ticker);
            }
            ticker->setTickCount(indexTickCount(axis, tickFont, r ? std::max(r->n, r->m) : 0));
        }
        if (!useTokens) axis->setLabel(indexLabel);
        axis->setTickLabelFont(tickFont);
    };
    setup(m_plot->xAxis, keyTokens, tr("key token"), tr("key index"));
    setup(m_plot->yAxis, queryTokens, tr("query token"), tr("query index"));
    m_plot->xAxis->setTickLabelRotation(keyTokens ? -90 : 0);
    m_keyTokens = keyTokens;
    m_queryTokens = queryTokens;
}

int HeadHeatmap::indexTickCount(const QCPAxis* axis, const QFont& font, std::int64_t largestIndex) {
    // As many ticks as their labels fit with a label's width between them (QCP may round the step
    // down to 1, 2, 2.5 or 5 times a power of ten: up to 1.4 times the count asked for).
    const QFontMetricsF metrics(font);
    const bool horizontal = axis->orientation() == Qt::Horizontal;
    const double pixels = horizontal ? axis->axisRect()->width() : axis->axisRect()->height();
    const double label = horizontal ? metrics.horizontalAdvance(QString::number(std::max<std::int64_t>(largestIndex, 10)))
                                    : metrics.height();
    return std::clamp(static_cast<int>(pixels / (2.0 * label) / 1.4), 2, 8);
}

void HeadHeatmap::onRangeChanged() {
    if (m_inRangeUpdate) return;
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0) return;
    m_inRangeUpdate = true;
    // Keep the view on the matrix: no panning past its edges, no zooming out beyond it.
    auto clamp = [](QCPAxis* axis, double cells) {
        QCPRange range = axis->range();
        const double lo = -0.5, hi = cells - 0.5;
        if (range.size() > hi - lo) range = QCPRange(lo, hi);
        if (range.size() < 1.0) range = QCPRange(range.center() - 0.5, range.center() + 0.5);
        if (range.lower < lo) range += lo - range.lower;
        if (range.upper > hi) range -= range.upper - hi;
        if (range != axis->range()) axis->setRange(range);
    };
    clamp(m_plot->xAxis, static_cast<double>(r->m));
    clamp(m_plot->yAxis, static_cast<double>(r->n));
    m_inRangeUpdate = false;
    updateTickLabels();
    if (m_pooled && m_pooled->poolFactor() > 1) m_lodTimer->start();
}

void HeadHeatmap::setVisibleRange(double keyLo, double keyHi, double queryLo, double queryHi) {
    m_inRangeUpdate = true;
    m_plot->xAxis->setRange(keyLo - 0.5, keyHi + 0.5);
    m_plot->yAxis->setRange(queryLo - 0.5, queryHi + 0.5);
    m_inRangeUpdate = false;
    onRangeChanged();
    m_lodTimer->stop();
    updateLevelOfDetail();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

std::pair<double, double> HeadHeatmap::visibleKeyRange() const {
    const QCPRange r = m_plot->xAxis->range();
    return {r.lower + 0.5, r.upper - 0.5};
}

std::pair<double, double> HeadHeatmap::visibleQueryRange() const {
    const QCPRange r = m_plot->yAxis->range();
    return {r.lower + 0.5, r.upper - 0.5};
}

void HeadHeatmap::zoomBy(double factor) {
    if (m_shownHead < 0 || !(factor > 0.0)) return;
    m_plot->xAxis->scaleRange(factor);
    m_plot->yAxis->scaleRange(factor);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::resetZoom() {
    fitRanges();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::fitRanges() {
    const engine::AttentionResult* r = shownResult();
    const bool shown = r && m_shownHead >= 0;
    m_inRangeUpdate = true;
    m_plot->xAxis->setRange(-0.5, shown ? static_cast<double>(r->m) - 0.5 : 0.5);
    m_plot->yAxis->setRange(-0.5, shown ? static_cast<double>(r->n) - 0.5 : 0.5);
    m_inRangeUpdate = false;
    if (!shown) return;
    if (showsRegion()) showMatrix(m_pooled);
    updateTickLabels();
}

void HeadHeatmap::fitAxisRect() {
    const engine::AttentionResult* r = shownResult();
    const bool shown = r && m_shownHead >= 0;
    m_plot->fitCells(shown ? r->n : 0, shown ? r->m : 0);
    if (!shown) return;
    // The cells' size is known only now: thin the token labels (or space the index ticks) again
    // when it changed (every replot lays out; the labels are rebuilt only for a new size).
    const QSize rect = m_plot->axisRect()->rect().size();
    if (rect == m_labelledRectSize) return;
    m_labelledRectSize = rect;
    const int keyStep = m_keyLabelStep, queryStep = m_queryLabelStep;
    const auto tickCount = [](QCPAxis* axis) {
        const auto fixed = qSharedPointerDynamicCast<QCPAxisTickerFixed>(axis->ticker());
        return fixed ? fixed->tickCount() : 0;
    };
    const int keyTicks = tickCount(m_plot->xAxis), queryTicks = tickCount(m_plot->yAxis);
    updateTickLabels();
    if (keyStep != m_keyLabelStep || queryStep != m_queryLabelStep || keyTicks != tickCount(m_plot->xAxis) ||
        queryTicks != tickCount(m_plot->yAxis))
        m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::setCompactTitle(bool compact) {
    m_compactTitle = compact;
    rebuild();
}

void HeadHeatmap::setTitlePrefix(const QString& prefix) {
    m_titlePrefix = prefix;
    rebuild();
}

void HeadHeatmap::setValueRange(double lo, double hi) {
    m_rangeLo = lo;
    m_rangeHi = hi;
    if (m_shownHead >= 0) applyColors();
}

void HeadHeatmap::setOptions(const HeatmapOptions& options) {
    if (options == m_options) return;
    const bool poolingChanged = options.pooling != m_options.pooling;
    m_options = options;
    if (!Colormap::builtinNames().contains(m_options.colormap)) m_options.colormap = QStringLiteral("viridis");
    syncToolbar();
    if (poolingChanged && isPooling()) {
        rebuild();  // the head on its way was pooled the other way: pool it again
        return;
    }
    if (m_shownHead < 0) return;
    if (poolingChanged && m_pooled && m_pooled->poolFactor() > 1 &&
        m_source.poolsInBackground(keyOf(m_shownHead, m_options.pooling))) {
        startPooling(m_shownHead, m_options.pooling);  // shown with the zoom kept when ready
        applyColors();
        return;
    }
    if (poolingChanged && m_pooled && m_pooled->poolFactor() > 1) {
        // Re-pool (or take the cached pooling) but keep the zoom.
        const auto x = m_plot->xAxis->range(), y = m_plot->yAxis->range();
        const bool region = showsRegion();
        m_pooled = m_source.poolNow(keyOf(m_shownHead, poolModeFor(*shownResult())));
        if (!region) showMatrix(m_pooled);
        m_inRangeUpdate = true;
        m_plot->xAxis->setRange(x);
        m_plot->yAxis->setRange(y);
        m_inRangeUpdate = false;
        if (region) applyColors();
        updateTitle();
        return;
    }
    applyColors();
    updateTitle();
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

}  // namespace attnscope::views
