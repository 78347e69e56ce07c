// HeadHeatmap's level of detail (head_heatmap.cpp holds the rest of the class): the pooled head
// and the zoomed regions that PoolingJobs and ZoomRegions make, drawn.

#include "views/heatmap/head_heatmap.h"

#include "views/heatmap/pooling_jobs.h"
#include "views/heatmap/zoom_regions.h"
#include "views/data/inspection_state.h"
#include "views/heatmap/heatmap_toolbar.h"
#include "views/widgets/matrix_plot.h"

#include <QLoggingCategory>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

Q_DECLARE_LOGGING_CATEGORY(lcHeatmap)

void HeadHeatmap::setBackgroundPooling(std::int64_t minWeights) { m_source.setBackgroundWeights(minWeights); }

PoolMode HeadHeatmap::poolModeFor(const engine::AttentionResult& r) const {
    return HeadMatrixSource::modeFor(r, m_options.pooling);
}

HeadKey HeadHeatmap::keyOf(int head, PoolMode mode) const { return HeadKey{m_state ? m_state->resultIndex() : 0, head, mode}; }

void HeadHeatmap::startPooling(int head, PoolMode mode) {
    m_pooling->start(keyOf(head, mode));
    syncPoolingControls();
    // The previous picture stays while it belongs to this result; a new result starts empty.
    if (m_shownSerial != m_source.serial() || !m_pooled) {
        m_shownHead = -1;
        m_pooled.reset();
        m_shown.reset();
        m_colorMap->setVisible(false);  // data and image stay allocated for the head to come
        m_ticks.clearTokens();
    }
    updateTitle();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::onPooled(int head, std::shared_ptr<const HeadMatrix> matrix) {
    syncPoolingControls();
    if (!matrix) {
        m_title->setText(m_titlePrefix + tr("Head %1 could not be pooled for display (out of memory)").arg(head));
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const bool keepZoom = m_pooled && m_shownSerial == m_source.serial() && m_shownHead >= 0;  // (any head of this result)
    showHead(head, std::move(matrix), keepZoom);
    qCDebug(lcHeatmap) << "pooled head" << head << "in the background";
    Q_EMIT backgroundPoolingFinished(head);
}

void HeadHeatmap::finishPooling() {
    m_pooling->finish();
    m_regions->finish();
}

void HeadHeatmap::cancelPooling() {
    m_pooling->cancel();
    syncPoolingControls();
}

void HeadHeatmap::stopPooling() {
    if (!isPooling()) return;
    m_pooling->stop();
    syncPoolingControls();
    updateTitle();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::poolAgain() {
    const engine::AttentionResult* r = shownResult();
    if (stoppedHead() < 0 || !r) return;
    startPooling(stoppedHead(), poolModeFor(*r));
}

void HeadHeatmap::syncPoolingControls() { m_toolbar->showPooling(isPooling(), poolingPercent(), stoppedHead()); }

void HeadHeatmap::showHead(int head, std::shared_ptr<const HeadMatrix> matrix, bool keepZoom) {
    m_shownHead = head;
    m_shownSerial = m_source.serial();
    m_pooled = std::move(matrix);
    m_colorMap->setVisible(true);
    showAxesAndColorBar(true);
    if (m_pooled->poolFactor() > 1) m_regions->warmStorage();
    if (!keepZoom) {
        showMatrix(m_pooled);
        updateAxes();
        return;
    }
    const QCPRange x = m_plot->xAxis->range(), y = m_plot->yAxis->range();
    showMatrix(m_pooled);
    m_inRangeUpdate = true;
    m_plot->xAxis->setRange(x);
    m_plot->yAxis->setRange(y);
    m_inRangeUpdate = false;
    updateLevelOfDetail();
    updateTickLabels();
}

CellBox HeadHeatmap::visibleCells() const {
    const engine::AttentionResult* r = shownResult();
    if (!r) return {};
    const QCPRange x = m_plot->xAxis->range(), y = m_plot->yAxis->range();
    const auto k0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(x.lower + 0.5)));
    const auto k1 = std::min<std::int64_t>(r->m - 1, static_cast<std::int64_t>(std::ceil(x.upper - 0.5)));
    const auto q0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(y.lower + 0.5)));
    const auto q1 = std::min<std::int64_t>(r->n - 1, static_cast<std::int64_t>(std::ceil(y.upper - 0.5)));
    return CellBox{q0, k0, q1 - q0 + 1, k1 - k0 + 1};
}

void HeadHeatmap::updateLevelOfDetail() {
    if (shownResult() && m_pooled && m_pooled->poolFactor() > 1) m_regions->follow();
}

ZoomRegions::View HeadHeatmap::regionView() const {
    const engine::AttentionResult* r = shownResult();
    if (!r || !m_pooled || m_shownHead < 0) return {};
    return {m_state ? m_state->resultIndex() : 0, m_shownHead, r->n, r->m, visibleCells(), showsRegion() ? m_shown.get() : nullptr};
}

void HeadHeatmap::showRegion(std::shared_ptr<const HeadMatrix> region, bool fromWorker) {
    showMatrix(std::move(region));
    updateTickLabels();
    if (!fromWorker) return;
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    Q_EMIT regionShown();
}

void HeadHeatmap::showAxesAndColorBar(bool shown) {
    m_plot->xAxis->setVisible(shown);
    m_plot->yAxis->setVisible(shown);
    m_colorScale->setVisible(shown && m_plot->colorBarShown());
}

}  // namespace attnscope::views
