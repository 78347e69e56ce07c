#include "views/heatmap/pooling_jobs.h"

#include "views/data/background_job.h"

#include <QTimer>

namespace attnscope::views {

PoolingJobs::PoolingJobs(HeadMatrixSource& source, QObject* parent) : QObject(parent), m_source(source) {
    m_timer = new QTimer(this);
    m_timer->setInterval(150);
    connect(m_timer, &QTimer::timeout, this, &PoolingJobs::progressed);
}

void PoolingJobs::start(const HeadKey& key) {
    if (auto job = m_source.startPooling(key)) {
        using Matrix = std::shared_ptr<const HeadMatrix>;
        const auto work = std::move(job->work);  // (the copy kept by the callback must not hold the result)
        m_future = runInBackground<Matrix>(this, work, [this, started = *job](Matrix matrix) { onPooled(started, std::move(matrix)); });
    }
    m_timer->start();
}

void PoolingJobs::onPooled(const HeadMatrixSource::PoolJob& job, std::shared_ptr<const HeadMatrix> matrix) {
    if (!m_source.pooled(job, matrix)) return;
    m_timer->stop();
    Q_EMIT pooled(job.key.head, std::move(matrix));
}

void PoolingJobs::finish() {
    const HeadMatrixSource::PoolJob* job = m_source.poolingJob();
    if (!job) return;
    const HeadMatrixSource::PoolJob waited = *job;
    m_future.waitForFinished();
    onPooled(waited, m_future.result());
}

void PoolingJobs::stop() {
    m_source.stopPooling();
    m_timer->stop();
}

void PoolingJobs::cancel() {
    m_source.cancelPooling();
    m_timer->stop();
}

}  // namespace attnscope::views
