#include "views/heatmap/head_heatmap.h"

#include "views/data/colormap.h"
#include "views/data/inspection_state.h"
#include "views/data/title_wrap.h"
#include "views/data/token_label.h"
#include "views/heatmap/heatmap_title.h"
#include "views/heatmap/heatmap_toolbar.h"
#include "views/heatmap/pooling_jobs.h"
#include "views/widgets/matrix_plot.h"
#include "views/widgets/qcp.h"

#include <QLoggingCategory>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

Q_LOGGING_CATEGORY(lcHeatmap, "attnscope.views.heatmap", QtInfoMsg)

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
    m_toolbar = new HeatmapToolbar(this);
    layout->addWidget(m_toolbar);
    connect(m_toolbar, &HeatmapToolbar::optionsPicked, this, &HeadHeatmap::onToolbarPicked);
    connect(m_toolbar, &HeatmapToolbar::stopClicked, this, &HeadHeatmap::stopPooling);
    connect(m_toolbar, &HeatmapToolbar::poolAgainClicked, this, &HeadHeatmap::poolAgain);
    m_plot = new MatrixPlot(MatrixPlot::ColorBar::Right, this);
    layout->addWidget(m_plot, 1);
    buildPlot();
    m_pooling = new PoolingJobs(m_source, this);
    connect(m_pooling, &PoolingJobs::pooled, this, &HeadHeatmap::onPooled);
    connect(m_pooling, &PoolingJobs::progressed, this, [this] {
        syncPoolingControls();
        updateTitle();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    });
    // Wheel zoom and drag fire many range changes; the full-resolution region follows once they pause.
    m_lodTimer = new QTimer(this);
    m_lodTimer->setSingleShot(true);
    m_lodTimer->setInterval(40);
    connect(m_lodTimer, &QTimer::timeout, this, &HeadHeatmap::updateLevelOfDetail);
    m_regions = new ZoomRegions(m_source, [this] { return regionView(); }, this);
    connect(m_regions, &ZoomRegions::regionReady, this, &HeadHeatmap::showRegion);
    connect(m_regions, &ZoomRegions::wholeHeadNeeded, this, [this] {
        showMatrix(m_pooled);
        updateTickLabels();
    });
    rebuild();
}

void HeadHeatmap::buildPlot() {
    m_title = m_plot->titleElement();
    m_colorMap = m_plot->colorMap();
    m_colorScale = m_plot->colorScale();
    m_colorScale->axis()->setLabel(tr("attention weight"));
    // NOTE: after setColorScale (MatrixPlot): linking makes the map adopt the scale's gradient (gpCold).
    setHeatmapGradient(m_colorMap, m_colorScale, QStringLiteral("viridis"));
    m_marker = new QCPItemRect(m_plot);
    m_marker->setPen(QPen(QColor(255, 64, 64), 2.0));  // red stays visible on every viridis colour
    m_marker->setBrush(Qt::NoBrush);
    m_marker->setVisible(false);
    m_plot->xAxis->setLabel(tr("key"));
    m_plot->yAxis->setLabel(tr("query"));
    m_pointer = new CellPointer(m_plot, this);
    m_pointer->setZoomKeyFactor(kKeyZoomFactor);
    m_pointer->setExtent([this] {
        const engine::AttentionResult* r = shownResult();
        return r && m_shownHead >= 0 ? CellPointer::Extent{r->n, r->m} : CellPointer::Extent{};
    });
    m_pointer->setCellText([this](int query, int key) { return hoverText(query, key); });
    connect(m_pointer, &CellPointer::cellHovered, this, &HeadHeatmap::cellHovered);
    connect(m_pointer, &CellPointer::cursorMoved, this, &HeadHeatmap::setMarkedCell);
    connect(m_pointer, &CellPointer::zoomRequested, this, &HeadHeatmap::zoomBy);
    connect(m_plot, &QCustomPlot::afterLayout, this, &HeadHeatmap::fitAxisRect);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, &HeadHeatmap::resetZoom);
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &HeadHeatmap::onRangeChanged);
    connect(m_plot->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &HeadHeatmap::onRangeChanged);
    // Keyboard focus lands on the plot, so window shortcuts (PgUp/PgDn) work after a click on it.
    m_plot->setFocusPolicy(Qt::StrongFocus);
    setFocusProxy(m_plot);
    m_plot->installEventFilter(this);
}

HeadHeatmap::~HeadHeatmap() = default;

void HeadHeatmap::setInspectionState(InspectionState* state) {
    followInspectionState(this, m_state, state, [this] { rebuild(); });
}

void HeadHeatmap::setResult(Run result) {
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
    m_pointer->clearHover();
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
        m_toolbar->showMeansOnly(false, m_options.pooling);
        showAxesAndColorBar(false);  // (empty axes under a 0–6 colour bar read as data)
        m_title->setText(result() ? tr("No head to show") : m_emptyMessage.isEmpty() ? tr("No result yet: press Run (F5)") : m_emptyMessage);
        m_ticks.clearTokens();
        refreshHighlight();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const PoolMode mode = poolModeFor(*r);
    m_toolbar->showMeansOnly(mode == PoolMode::Mean && m_options.pooling == PoolMode::Max, m_options.pooling);
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
    placeHeatmapCells(m_colorMap, *m_shown);
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
    // Sign and range come from the whole head, so zooming in does not change the colours.
    m_colors = HeatmapColors::of(*m_pooled, m_options, m_rangeLo, m_rangeHi);
    drawHeatmapCells(m_colorMap, m_colorScale, *m_shown, m_colors);
    m_colorScale->axis()->setLabel(colorBarLabel());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString HeadHeatmap::colorBarLabel() const {
    // A compact pane is too short for the qualifiers (they ran into its title): they are in the
    // full title's tooltip and in the compare view's legend line.
    return heatmapColorBarLabel(m_compactTitle ? nullptr : m_shown.get(), showsRegion(), m_colors, m_options.scale);
}

std::pair<double, double> HeadHeatmap::colorRange() const {
    const QCPRange r = m_colorMap->dataRange();
    return {r.lower, r.upper};
}

void HeadHeatmap::updateTitle() {
    const engine::AttentionResult* r = shownResult();
    if (!r) return;
    const int index = m_state ? m_state->resultIndex() : 0;
    if (!m_pooled) {
        const QString name = resultName(*result(), static_cast<std::size_t>(index), m_variantNames);
        if (isPooling())
            m_title->setText(m_titlePrefix + tr("%1 — pooling head %2 of %3 for display (n = %4): %5 %…")
                                                 .arg(name)
                                                 .arg(poolingHead())
                                                 .arg(r->heads)
                                                 .arg(r->n)
                                                 .arg(poolingPercent()));
        else if (stoppedHead() >= 0)
            m_title->setText(m_titlePrefix + tr("%1 — pooling of head %2 stopped: “Pool head %2” draws it").arg(name).arg(stoppedHead()));
        return;
    }
    HeatmapTitleFacts facts{result().get(), index, m_variantNames, m_shownHead, m_pooled->poolFactor(), m_pooled->poolMode(),
                            showsRegion(), m_pooled->hasWeights(), {}};
    if (isPooling()) facts.poolingNote = tr(" — pooling head %1: %2 %…").arg(poolingHead()).arg(poolingPercent());
    else if (stoppedHead() >= 0) facts.poolingNote = tr(" — pooling of head %1 stopped").arg(stoppedHead());
    const HeatmapTitle title = heatmapTitle(facts);
    m_fullTitle = m_titlePrefix + title.text + QLatin1Char('\n') + colorBarLabel();
    if (m_compactTitle)
        m_title->setText(compactHeatmapTitle(m_titlePrefix, title, r->variantId, m_title->font(), std::max(40, m_plot->width() - 12)));
    else
        m_title->setText(wrapTitle(m_titlePrefix + title.text, m_title->font(), m_plot->width() - 12));
}

void HeadHeatmap::updateAxes() {
    m_plot->xAxis->setSubTicks(false);
    m_plot->yAxis->setSubTicks(false);
    fitRanges();
    updateTickLabels();
}

MatrixTickLabels::Matrix HeadHeatmap::tickMatrix() const {
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0) return {};
    return {r->n, r->m, poolFactor() == 1, static_cast<std::int64_t>(result()->input.tokens.size()),
            [this](std::int64_t i) { return tokenText(i); }};
}

void HeadHeatmap::updateTickLabels() { m_ticks.update(m_plot, tickMatrix(), font()); }

void HeadHeatmap::onRangeChanged() {
    if (m_inRangeUpdate) return;
    const engine::AttentionResult* r = shownResult();
    if (!r || m_shownHead < 0) return;
    m_inRangeUpdate = true;
    m_plot->keepViewOnCells(r->n, r->m);
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
    // The cells' size is known only now: thin the token labels (or space the index ticks) again.
    if (shown && m_ticks.refit(m_plot, tickMatrix(), font())) m_plot->replot(QCustomPlot::rpQueuedReplot);
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
    m_toolbar->setOptions(m_options);
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
    m_pointer->setAnchor(m_markedQuery, m_markedKey);
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

QWidget* HeadHeatmap::toolbar() const { return m_toolbar; }

void HeadHeatmap::setToolbarVisible(bool visible) { m_toolbar->setVisible(visible); }

void HeadHeatmap::onToolbarPicked(const HeatmapOptions& options) {
    if (options == m_options) return;
    setOptions(options);
    Q_EMIT optionsChanged(m_options);
}

}  // namespace attnscope::views
