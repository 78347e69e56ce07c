// HeadHeatmap's level of detail (head_heatmap.cpp holds the rest of the class): pooled heads and
// their cache, pooling on the views' worker thread, and full-resolution regions of a zoomed view.

#include "views/head_heatmap.h"

#include "views/background_job.h"
#include "views/inspection_state.h"
#include "views/qcp.h"

#include <QLoggingCategory>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope::views {

Q_DECLARE_LOGGING_CATEGORY(lcHeatmap)

void HeadHeatmap::setBackgroundPooling(std::int64_t minWeights) {
    m_backgroundWeights = std::max<std::int64_t>(minWeights, 0);
}

PoolMode HeadHeatmap::poolModeFor(const engine::AttentionResult& r) const {
    // Unpooled heads do not depend on the mode: one entry serves both.
    return std::max(r.n, r.m) > HeadMatrix::kMaxDisplaySide ? m_options.pooling : PoolMode::Max;
}

std::shared_ptr<const HeadMatrix> HeadHeatmap::cachedMatrix(int resultIndex, int head, PoolMode mode) {
    for (auto it = m_cache.begin(); it != m_cache.end(); ++it) {
        if (it->run == m_result.get() && it->resultIndex == resultIndex && it->head == head && it->mode == mode) {
            CacheEntry hit = *it;
            m_cache.erase(it);
            m_cache.push_front(hit);
            return hit.matrix;
        }
    }
    return nullptr;
}

void HeadHeatmap::cacheMatrix(int resultIndex, int head, PoolMode mode, std::shared_ptr<const HeadMatrix> matrix) {
    if (cachedMatrix(resultIndex, head, mode)) return;
    m_cache.push_front({m_result.get(), resultIndex, head, mode, std::move(matrix)});
    while (static_cast<int>(m_cache.size()) > kCacheSize) m_cache.pop_back();
}

std::shared_ptr<const HeadMatrix> HeadHeatmap::pooledMatrix(const engine::AttentionResult& r, int head) {
    const int index = m_state ? m_state->resultIndex() : 0;
    const PoolMode mode = poolModeFor(r);
    if (auto hit = cachedMatrix(index, head, mode)) return hit;
    ++m_poolingCount;
    auto matrix = std::make_shared<const HeadMatrix>(HeadMatrix::fromResult(r, head, HeadMatrix::kMaxDisplaySide, mode));
    cacheMatrix(index, head, mode, matrix);
    return matrix;
}

bool HeadHeatmap::poolsInBackground(const engine::AttentionResult& r, int head, PoolMode mode) {
    return r.n * r.m > m_backgroundWeights && !cachedMatrix(m_state ? m_state->resultIndex() : 0, head, mode);
}

void HeadHeatmap::startPooling(int head, PoolMode mode) {
    const int index = m_state ? m_state->resultIndex() : 0;
    const bool running = isPooling() && m_poolJob.serial == m_resultSerial && m_poolJob.resultIndex == index &&
                         m_poolJob.head == head && m_poolJob.mode == mode;
    if (!running) {
        const PoolJob job{std::make_shared<PoolProgress>(), m_poolTickets.start(), m_resultSerial, index, head, mode};
        m_poolJob = job;
        m_poolingHead = head;
        ++m_poolingCount;
        // HeadMatrix is plain data: the worker holds the result alive and touches nothing else.
        using Matrix = std::shared_ptr<const HeadMatrix>;
        m_poolFuture = runInBackground<Matrix>(
            this,
            [run = m_result, index, head, mode, progress = job.progress]() -> Matrix {
                const auto keepGoing = [&progress](double done) {
                    progress->permille.store(static_cast<int>(done * 1000.0), std::memory_order_relaxed);
                    return !progress->stop.load(std::memory_order_relaxed);
                };
                auto matrix = std::make_shared<const HeadMatrix>(HeadMatrix::fromResult(
                    run->results[static_cast<std::size_t>(index)], head, HeadMatrix::kMaxDisplaySide, mode, keepGoing));
                return matrix->complete() ? matrix : nullptr;
            },
            [this, job](Matrix matrix) { onPooled(job, std::move(matrix)); });
    }
    m_stoppedHead = -1;
    m_poolTimer->start();
    syncPoolingControls();
    // The previous picture stays while it belongs to this result; a new result starts empty.
    if (m_shownSerial != m_resultSerial || !m_pooled) {
        m_shownHead = -1;
        m_pooled.reset();
        m_shown.reset();
        m_colorMap->setVisible(false);  // data and image stay allocated for the head to come
        m_keyTokens = m_queryTokens = false;
    }
    updateTitle();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::onPooled(const PoolJob& job, std::shared_ptr<const HeadMatrix> matrix) {
    const bool current = isPooling() && job.generation == m_poolJob.generation;
    // A pooling that was superseded is still right for its head: kept for a later visit.
    if (matrix && job.serial == m_resultSerial) cacheMatrix(job.resultIndex, job.head, job.mode, matrix);
    if (!current || job.progress->stop.load()) return;
    m_poolingHead = -1;
    m_poolTimer->stop();
    syncPoolingControls();
    if (!matrix) {
        m_title->setText(m_titlePrefix + tr("Head %1 could not be pooled for display (out of memory)").arg(job.head));
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const bool keepZoom = m_pooled && m_shownSerial == m_resultSerial && m_shownHead == job.head;
    showHead(job.head, std::move(matrix), keepZoom);
    qCDebug(lcHeatmap) << "pooled head" << job.head << "in the background";
    Q_EMIT backgroundPoolingFinished(job.head);
}

void HeadHeatmap::finishPooling() {
    if (isPooling()) {
        m_poolFuture.waitForFinished();
        onPooled(m_poolJob, m_poolFuture.result());
    }
    finishRegion();
}

void HeadHeatmap::cancelPooling() {
    // (a superseded pooling runs on: its head is cached for a later visit)
    m_poolingHead = -1;
    m_stoppedHead = -1;
    m_poolTimer->stop();
    syncPoolingControls();
}

int HeadHeatmap::poolingPercent() const {
    return isPooling() && m_poolJob.progress ? m_poolJob.progress->permille.load(std::memory_order_relaxed) / 10 : 0;
}

void HeadHeatmap::stopPooling() {
    if (!isPooling()) return;
    m_poolJob.progress->stop = true;
    m_stoppedHead = m_poolingHead;
    m_poolingHead = -1;
    m_poolTimer->stop();
    syncPoolingControls();
    updateTitle();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeadHeatmap::poolAgain() {
    const engine::AttentionResult* r = shownResult();
    if (m_stoppedHead < 0 || !r) return;
    startPooling(m_stoppedHead, poolModeFor(*r));
}

void HeadHeatmap::syncPoolingControls() {
    const bool pooling = isPooling(), stopped = m_stoppedHead >= 0;
    m_poolBar->setVisible(pooling);
    m_poolBar->setValue(poolingPercent());
    m_poolButton->setVisible(pooling || stopped);
    m_poolButton->setText(pooling ? tr("Cancel") : tr("Pool head %1").arg(m_stoppedHead));
    m_poolButton->setToolTip(pooling ? tr("Stop pooling this head for display (Esc)")
                                     : tr("Pool head %1 for display again").arg(m_stoppedHead));
}

void HeadHeatmap::showHead(int head, std::shared_ptr<const HeadMatrix> matrix, bool keepZoom) {
    m_shownHead = head;
    m_shownSerial = m_resultSerial;
    m_pooled = std::move(matrix);
    m_colorMap->setVisible(true);
    showAxesAndColorBar(true);
    if (m_backgroundWeights < std::numeric_limits<std::int64_t>::max() && m_pooled->poolFactor() > 1 && !m_region &&
        !m_regionWarming) {
        // NOTE: the first zoomed region's 16 MB faulted in page by page on the GUI thread (a third
        // of that zoom step); a region built once on the worker thread lends its storage instead.
        m_regionWarming = true;
        const int side = HeadMatrix::kMaxDisplaySide;
        runInBackground<std::shared_ptr<HeadMatrix>>(
            this,
            [side] {
                return std::make_shared<HeadMatrix>(HeadMatrix::storageFor(static_cast<std::size_t>(side) * side));
            },
            [this](std::shared_ptr<HeadMatrix> spare) {
                m_regionWarming = false;
                if (!m_region) m_region = std::move(spare);  // storage only: never shown as it is
            });
    }
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

void HeadHeatmap::updateLevelOfDetail() {
    const engine::AttentionResult* r = shownResult();
    if (!r || !m_pooled || m_pooled->poolFactor() == 1) return;
    const QCPRange x = m_plot->xAxis->range(), y = m_plot->yAxis->range();
    const auto k0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(x.lower + 0.5)));
    const auto k1 = std::min<std::int64_t>(r->m - 1, static_cast<std::int64_t>(std::ceil(x.upper - 0.5)));
    const auto q0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(y.lower + 0.5)));
    const auto q1 = std::min<std::int64_t>(r->n - 1, static_cast<std::int64_t>(std::ceil(y.upper - 0.5)));
    const std::int64_t side = HeadMatrix::kMaxDisplaySide;
    const bool small = k1 - k0 + 1 <= side && q1 - q0 + 1 <= side;
    if (!small) {
        if (showsRegion()) {
            showMatrix(m_pooled);
            updateTickLabels();
        }
        return;
    }
    const bool region = showsRegion();
    if (region && m_shown->colOffset() <= k0 && m_shown->rowOffset() <= q0 &&
        m_shown->colOffset() + m_shown->cols() > k1 && m_shown->rowOffset() + m_shown->rows() > q1)
        return;  // the region drawn already covers the view
    // The view plus kRegionMargin of its span on each side (at most `side` cells), so pans and
    // zooms inside it reuse it. An axis the view has not left keeps its extent; one it left
    // towards higher (lower) indices puts most of the margin ahead of the view.
    auto window = [side](std::int64_t a, std::int64_t b, std::int64_t total, std::int64_t prev0, std::int64_t prevN) {
        const std::int64_t span = b - a + 1;
        if (prevN > 0 && a >= prev0 && b < prev0 + prevN) return std::pair<std::int64_t, std::int64_t>(prev0, prevN);
        const auto margin = static_cast<std::int64_t>(std::ceil(static_cast<double>(span) * kRegionMargin));
        const std::int64_t want = std::min({side, total, span + 2 * margin});
        const std::int64_t slack = want - span;
        std::int64_t start = a - slack / 2;
        if (prevN > 0 && b >= prev0 + prevN) start = a - slack / 8;
        else if (prevN > 0 && a < prev0) start = a - slack + slack / 8;
        return std::pair<std::int64_t, std::int64_t>(std::clamp<std::int64_t>(start, 0, total - want), want);
    };
    const auto [rc0, rcn] = window(k0, k1, r->m, region ? m_shown->colOffset() : 0, region ? m_shown->cols() : 0);
    const auto [rr0, rrn] = window(q0, q1, r->n, region ? m_shown->rowOffset() : 0, region ? m_shown->rows() : 0);
    // The previous region's storage is reused while only this view holds it.
    auto spare = std::make_shared<HeadMatrix>();
    if (m_backgroundWeights == std::numeric_limits<std::int64_t>::max()) {
        if (m_region && m_region.use_count() <= (region ? 2 : 1)) *spare = std::move(*m_region);
        m_region = std::make_shared<HeadMatrix>(HeadMatrix::fromRegion(*r, m_shownHead, rr0, rc0, rrn, rcn, std::move(*spare)));
        showMatrix(m_region);
        updateTickLabels();
        return;
    }
    // In the window: a 2048² tile of a long head is tens of milliseconds of exact weights, so it is
    // built on the worker thread; the pooled picture stays until it arrives.
    const bool pendingCovers = m_regionJob.generation != 0 && m_regionJob.serial == m_resultSerial &&
                               m_regionJob.head == m_shownHead && m_regionJob.row0 <= q0 && m_regionJob.col0 <= k0 &&
                               m_regionJob.row0 + m_regionJob.rows > q1 && m_regionJob.col0 + m_regionJob.cols > k1;
    if (pendingCovers) return;  // the region on its way covers the view
    // (the shown region's storage cannot be lent while it is drawn)
    if (!region && m_region && m_region.use_count() == 1) *spare = std::move(*m_region);
    const RegionJob job{m_regionTickets.start(), m_resultSerial, m_shownHead, rr0, rc0, rrn, rcn};
    m_regionJob = job;
    m_regionFuture = runInBackground<std::shared_ptr<HeadMatrix>>(
        this,
        [run = m_result, index = m_state ? m_state->resultIndex() : 0, job, spare] {
            return std::make_shared<HeadMatrix>(HeadMatrix::fromRegion(run->results[static_cast<std::size_t>(index)], job.head,
                                                                       job.row0, job.col0, job.rows, job.cols,
                                                                       std::move(*spare)));
        },
        [this, job](std::shared_ptr<HeadMatrix> built) { onRegionBuilt(job, std::move(built)); });
}

void HeadHeatmap::onRegionBuilt(const RegionJob& job, std::shared_ptr<HeadMatrix> built) {
    if (job.generation != m_regionJob.generation) return;  // a later region was asked for
    m_regionJob = RegionJob{};
    if (!built || job.serial != m_resultSerial || job.head != m_shownHead || !m_pooled) return;
    m_region = std::move(built);
    // Shown only while the view still lies inside it (the user may have zoomed out meanwhile).
    const QCPRange x = m_plot->xAxis->range(), y = m_plot->yAxis->range();
    const bool small = x.size() <= HeadMatrix::kMaxDisplaySide + 1 && y.size() <= HeadMatrix::kMaxDisplaySide + 1;
    if (!small) return;
    showMatrix(m_region);
    updateTickLabels();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    Q_EMIT regionShown();
}

void HeadHeatmap::finishRegion() {
    if (m_regionJob.generation == 0) return;
    m_regionFuture.waitForFinished();
    onRegionBuilt(m_regionJob, m_regionFuture.result());
}

void HeadHeatmap::showAxesAndColorBar(bool shown) {
    m_plot->xAxis->setVisible(shown);
    m_plot->yAxis->setVisible(shown);
    m_colorScale->setVisible(shown);
}

}  // namespace attnscope::views
