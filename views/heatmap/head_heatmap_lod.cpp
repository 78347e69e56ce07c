// HeadHeatmap's level of detail (head_heatmap.cpp holds the rest of the class): what the
// HeadMatrixSource decides (the cache, which jobs count, the region a zoomed view needs) carried
// out on the views' worker thread and drawn.

#include "views/heatmap/head_heatmap.h"

#include "views/data/background_job.h"
#include "views/data/inspection_state.h"
#include "views/widgets/matrix_plot.h"

#include <QLoggingCategory>
#include <QTimer>

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
    if (auto job = m_source.startPooling(keyOf(head, mode))) {
        using Matrix = std::shared_ptr<const HeadMatrix>;
        const auto work = std::move(job->work);  // (the copy kept by the callback must not hold the result)
        m_poolFuture = runInBackground<Matrix>(this, work,
                                               [this, started = *job](Matrix matrix) { onPooled(started, std::move(matrix)); });
    }
    m_poolTimer->start();
    syncPoolingControls();
    // The previous picture stays while it belongs to this result; a new result starts empty.
    if (m_shownSerial != m_source.serial() || !m_pooled) {
        m_shownHead = -1;
        m_pooled.reset();
        m_shown.reset();
        m_colorMap->setVisible(false);  // data and image stay allocated for the head to come
        m_keyTokens = m_queryTokens = false;
    }
    updateTitle();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::onPooled(const HeadMatrixSource::PoolJob& job, std::shared_ptr<const HeadMatrix> matrix) {
    if (!m_source.pooled(job, matrix)) return;
    m_poolTimer->stop();
    syncPoolingControls();
    if (!matrix) {
        m_title->setText(m_titlePrefix + tr("Head %1 could not be pooled for display (out of memory)").arg(job.key.head));
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const bool keepZoom = m_pooled && m_shownSerial == m_source.serial() && m_shownHead >= 0;  // (any head of this result)
    showHead(job.key.head, std::move(matrix), keepZoom);
    qCDebug(lcHeatmap) << "pooled head" << job.key.head << "in the background";
    Q_EMIT backgroundPoolingFinished(job.key.head);
}

void HeadHeatmap::finishPooling() {
    if (const HeadMatrixSource::PoolJob* job = m_source.poolingJob()) {
        const HeadMatrixSource::PoolJob waited = *job;
        m_poolFuture.waitForFinished();
        onPooled(waited, m_poolFuture.result());
    }
    finishRegion();
}

void HeadHeatmap::cancelPooling() {
    // (a superseded pooling runs on: its head is cached for a later visit)
    m_source.cancelPooling();
    m_poolTimer->stop();
    syncPoolingControls();
}

void HeadHeatmap::stopPooling() {
    if (!isPooling()) return;
    m_source.stopPooling();
    m_poolTimer->stop();
    syncPoolingControls();
    updateTitle();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::poolAgain() {
    const engine::AttentionResult* r = shownResult();
    if (stoppedHead() < 0 || !r) return;
    startPooling(stoppedHead(), poolModeFor(*r));
}

void HeadHeatmap::syncPoolingControls() {
    const bool pooling = isPooling(), stopped = stoppedHead() >= 0;
    m_poolBar->setVisible(pooling);
    m_poolBar->setValue(poolingPercent());
    m_poolButton->setVisible(pooling || stopped);
    m_poolButton->setText(pooling ? tr("Cancel") : tr("Pool head %1").arg(stoppedHead()));
    m_poolButton->setToolTip(pooling ? tr("Stop pooling this head for display (Esc)")
                                     : tr("Pool head %1 for display again").arg(stoppedHead()));
}

void HeadHeatmap::warmRegionStorage() {
    // NOTE: the first zoomed region's 16 MB faulted in page by page on the GUI thread (a third of
    // that zoom step); a region built once on the worker thread lends its storage instead.
    m_regionWarming = true;
    const int side = HeadMatrix::kMaxDisplaySide;
    runInBackground<std::shared_ptr<HeadMatrix>>(
        this,
        [side] { return std::make_shared<HeadMatrix>(HeadMatrix::storageFor(static_cast<std::size_t>(side) * side)); },
        [this](std::shared_ptr<HeadMatrix> spare) {
            m_regionWarming = false;
            if (!m_region) m_region = std::move(spare);  // storage only: never shown as it is
        });
}

void HeadHeatmap::showHead(int head, std::shared_ptr<const HeadMatrix> matrix, bool keepZoom) {
    m_shownHead = head;
    m_shownSerial = m_source.serial();
    m_pooled = std::move(matrix);
    m_colorMap->setVisible(true);
    showAxesAndColorBar(true);
    if (m_source.usesWorker() && m_pooled->poolFactor() > 1 && !m_region && !m_regionWarming) warmRegionStorage();
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
    const engine::AttentionResult* r = shownResult();
    if (!r || !m_pooled || m_pooled->poolFactor() == 1) return;
    const CellBox view = visibleCells();
    const std::int64_t q0 = view.row0, q1 = view.row0 + view.rows - 1, k0 = view.col0, k1 = view.col0 + view.cols - 1;
    const bool region = showsRegion();
    const CellBox shownBox = region ? CellBox{m_shown->rowOffset(), m_shown->colOffset(), m_shown->rows(), m_shown->cols()}
                                    : CellBox{};
    const std::optional<CellBox> wanted = HeadMatrixSource::regionFor(q0, q1, k0, k1, r->n, r->m, shownBox);
    if (!wanted) {
        if (region) {
            showMatrix(m_pooled);
            updateTickLabels();
        }
        return;
    }
    if (shownBox.covers(q0, q1, k0, k1)) return;  // the region drawn already covers the view
    if (m_source.pendingRegionCovers(m_shownHead, q0, q1, k0, k1)) return;  // the one on its way does
    // The previous region's storage is reused while only this view holds it (the shown region's
    // cannot be lent to the worker while it is drawn).
    std::shared_ptr<HeadMatrix> spare;
    const bool synchronous = !m_source.usesWorker();
    if (m_region && m_region.use_count() <= (synchronous && region ? 2 : 1) && (synchronous || !region)) {
        spare = std::make_shared<HeadMatrix>(std::move(*m_region));
        if (synchronous) m_region.reset();
    }
    const HeadMatrixSource::RegionJob job = m_source.startRegion(m_state ? m_state->resultIndex() : 0, m_shownHead, *wanted,
                                                                 std::move(spare));
    HeadMatrixSource::RegionJob started = job;
    const auto work = std::move(started.work);  // (the copies kept here must not hold the result)
    if (synchronous) {
        // exports and tests: drawn at once, whatever the view's extent
        if (auto built = work(); m_source.regionBuilt(started, built, m_shownHead)) {
            m_region = std::move(built);
            showMatrix(m_region);
            updateTickLabels();
        }
        return;
    }
    // In the window: a 2048² tile of a long head is tens of milliseconds of exact weights, so it is
    // built on the worker thread; the pooled picture stays until it arrives.
    m_regionFuture = runInBackground<std::shared_ptr<HeadMatrix>>(
        this, work, [this, started](std::shared_ptr<HeadMatrix> built) { onRegionBuilt(started, std::move(built)); });
}

void HeadHeatmap::onRegionBuilt(const HeadMatrixSource::RegionJob& job, std::shared_ptr<HeadMatrix> built) {
    if (!m_pooled || !m_source.regionBuilt(job, built, m_shownHead)) return;
    m_region = std::move(built);
    // Shown only while the view still lies inside it (the user may have zoomed out or panned away
    // meanwhile; the next pause asks for the region of where the view is then).
    const CellBox view = visibleCells();
    if (!job.box.covers(view.row0, view.row0 + view.rows - 1, view.col0, view.col0 + view.cols - 1)) return;
    showMatrix(m_region);
    updateTickLabels();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    Q_EMIT regionShown();
}

void HeadHeatmap::finishRegion() {
    const HeadMatrixSource::RegionJob* job = m_source.regionJob();
    if (!job) return;  // (only a job on the worker thread is ever pending)
    const HeadMatrixSource::RegionJob waited = *job;
    m_regionFuture.waitForFinished();
    onRegionBuilt(waited, m_regionFuture.result());
}

void HeadHeatmap::showAxesAndColorBar(bool shown) {
    m_plot->xAxis->setVisible(shown);
    m_plot->yAxis->setVisible(shown);
    m_colorScale->setVisible(shown && m_plot->colorBarShown());
}

}  // namespace attnscope::views
