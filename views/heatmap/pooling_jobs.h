#pragma once
// A long head pooled for display on the views' worker thread (HeadMatrixSource decides which jobs
// count and caches what they make): started, waited for, stopped by the user, or cancelled when
// another head is shown at once; a tick while it runs so the progress can be shown.

#include "views/data/head_matrix_source.h"

#include <QFuture>
#include <QObject>

#include <memory>

class QTimer;

namespace attnscope::views {

class PoolingJobs : public QObject {
    Q_OBJECT
public:
    explicit PoolingJobs(HeadMatrixSource& source, QObject* parent = nullptr);

    /// Pools `key`'s head on the worker thread (unless that head is on its way already).
    void start(const HeadKey& key);
    /// Blocks until the head on its way is pooled and handed over (exports, screenshots).
    void finish();
    /// The user stopped it: it is pooled again only when asked (HeadMatrixSource::stoppedHead).
    void stop();
    /// Another head is shown at once: this one runs on and is cached for a later visit.
    void cancel();

Q_SIGNALS:
    /// The head asked for is pooled; a null matrix: it could not be (out of memory).
    void pooled(int head, std::shared_ptr<const HeadMatrix> matrix);
    /// Every 150 ms while a head is pooled.
    void progressed();

private:
    void onPooled(const HeadMatrixSource::PoolJob& job, std::shared_ptr<const HeadMatrix> matrix);

    HeadMatrixSource& m_source;
    QTimer* m_timer = nullptr;
    QFuture<std::shared_ptr<const HeadMatrix>> m_future;  // the pooling job on the worker thread
};

}  // namespace attnscope::views
