#pragma once
// The full-resolution region a zoomed-in view of a pooled head needs: which one (HeadMatrixSource
// decides), built at once for exports and tests or on the views' worker thread in the window,
// its storage reused from one region to the next (a 2048² region is 16 MB: faulting it in afresh
// for every zoom step cost a third of the step).

#include "views/data/head_matrix_source.h"

#include <QFuture>
#include <QObject>

#include <functional>
#include <memory>

namespace attnscope::views {

class ZoomRegions : public QObject {
    Q_OBJECT
public:
    /// What the heatmap draws now.
    struct View {
        int resultIndex = 0;
        int head = -1;            ///< -1: nothing drawn
        std::int64_t n = 0, m = 0;  ///< the head's queries and keys
        CellBox visible;          ///< the cells in view
        const HeadMatrix* region = nullptr;  ///< the region drawn, null while the whole head is
    };

    /// `view` is asked again when a region built on the worker arrives.
    ZoomRegions(HeadMatrixSource& source, std::function<View()> view, QObject* parent = nullptr);

    /// Storage for the first region, faulted in on the worker thread while the user looks at the
    /// pooled head (worker mode only, once).
    void warmStorage();
    /// Follows the view: asks for the region it needs (regionReady), or for the whole head when
    /// it needs none while a region is drawn (wholeHeadNeeded).
    void follow();
    /// Blocks until the region on its way is built and handed over (exports, screenshots).
    void finish();

Q_SIGNALS:
    /// The region to draw; `fromWorker` when it was built on the worker thread.
    void regionReady(std::shared_ptr<const HeadMatrix> region, bool fromWorker);
    void wholeHeadNeeded();

private:
    std::shared_ptr<HeadMatrix> spareStorage(bool synchronous, bool regionDrawn);
    void onBuilt(const HeadMatrixSource::RegionJob& job, std::shared_ptr<HeadMatrix> built);

    HeadMatrixSource& m_source;
    std::function<View()> m_view;
    std::shared_ptr<HeadMatrix> m_region;  // the last region built (storage reused for the next)
    bool m_warming = false;
    QFuture<std::shared_ptr<HeadMatrix>> m_future;  // the region job on the worker thread
};

}  // namespace attnscope::views
