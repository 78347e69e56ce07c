#include "views/heatmap/zoom_regions.h"

#include "views/data/background_job.h"

namespace attnscope::views {

ZoomRegions::ZoomRegions(HeadMatrixSource& source, std::function<View()> view, QObject* parent)
    : QObject(parent), m_source(source), m_view(std::move(view)) {}

void ZoomRegions::warmStorage() {
    // NOTE: the first zoomed region's 16 MB faulted in page by page on the GUI thread (a third of
    // that zoom step); a region built once on the worker thread lends its storage instead.
    if (!m_source.usesWorker() || m_region || m_warming) return;
    m_warming = true;
    const int side = HeadMatrix::kMaxDisplaySide;
    runInBackground<std::shared_ptr<HeadMatrix>>(
        this, [side] { return std::make_shared<HeadMatrix>(HeadMatrix::storageFor(static_cast<std::size_t>(side) * side)); },
        [this](std::shared_ptr<HeadMatrix> spare) {
            m_warming = false;
            if (!m_region) m_region = std::move(spare);  // storage only: never shown as it is
        });
}

std::shared_ptr<HeadMatrix> ZoomRegions::spareStorage(bool synchronous, bool regionDrawn) {
    // The previous region's storage is reused while only this holds it (the drawn region's cannot
    // be lent to the worker while it is drawn).
    if (!m_region || m_region.use_count() > (synchronous && regionDrawn ? 2 : 1) || (!synchronous && regionDrawn)) return nullptr;
    auto spare = std::make_shared<HeadMatrix>(std::move(*m_region));
    if (synchronous) m_region.reset();
    return spare;
}

void ZoomRegions::follow() {
    const View view = m_view();
    if (view.head < 0) return;
    const CellBox& v = view.visible;
    const std::int64_t q0 = v.row0, q1 = v.row0 + v.rows - 1, k0 = v.col0, k1 = v.col0 + v.cols - 1;
    const CellBox drawn = view.region ? CellBox{view.region->rowOffset(), view.region->colOffset(), view.region->rows(),
                                                view.region->cols()}
                                      : CellBox{};
    const std::optional<CellBox> wanted = HeadMatrixSource::regionFor(q0, q1, k0, k1, view.n, view.m, drawn);
    if (!wanted) {
        if (view.region) Q_EMIT wholeHeadNeeded();
        return;
    }
    if (drawn.covers(q0, q1, k0, k1)) return;                         // the region drawn covers the view
    if (m_source.pendingRegionCovers(view.head, q0, q1, k0, k1)) return;  // the one on its way does
    const bool synchronous = !m_source.usesWorker();
    HeadMatrixSource::RegionJob started =
        m_source.startRegion(view.resultIndex, view.head, *wanted, spareStorage(synchronous, view.region != nullptr));
    const auto work = std::move(started.work);  // (the copies kept here must not hold the result)
    if (synchronous) {
        // exports and tests: drawn at once, whatever the view's extent
        if (auto built = work(); m_source.regionBuilt(started, built, view.head)) {
            m_region = std::move(built);
            Q_EMIT regionReady(m_region, false);
        }
        return;
    }
    // In the window: a 2048² tile of a long head is tens of milliseconds of exact weights, so it is
    // built on the worker thread; the pooled picture stays until it arrives.
    m_future = runInBackground<std::shared_ptr<HeadMatrix>>(
        this, work, [this, started](std::shared_ptr<HeadMatrix> built) { onBuilt(started, std::move(built)); });
}

void ZoomRegions::onBuilt(const HeadMatrixSource::RegionJob& job, std::shared_ptr<HeadMatrix> built) {
    const View view = m_view();
    if (view.head < 0 || !m_source.regionBuilt(job, built, view.head)) return;
    m_region = std::move(built);
    // Shown only while the view still lies inside it (the user may have zoomed out or panned away
    // meanwhile; the next pause asks for the region of where the view is then).
    const CellBox& v = view.visible;
    if (!job.box.covers(v.row0, v.row0 + v.rows - 1, v.col0, v.col0 + v.cols - 1)) return;
    Q_EMIT regionReady(m_region, true);
}

void ZoomRegions::finish() {
    const HeadMatrixSource::RegionJob* job = m_source.regionJob();
    if (!job) return;  // (only a job on the worker thread is ever pending)
    const HeadMatrixSource::RegionJob waited = *job;
    m_future.waitForFinished();
    onBuilt(waited, m_future.result());
}

}  // namespace attnscope::views
