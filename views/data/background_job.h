#pragma once
// Plain-data work for a view on a worker thread, answered on the view's thread: long heads are
// pooled this way so the GUI thread never does it.

#include <QCoreApplication>
#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QPromise>
#include <QThreadPool>

#include <exception>
#include <functional>
#include <memory>
#include <utility>

namespace attnscope::views {

/// The one worker thread of the views' background work (GUI thread only). NOTE: one, not one per
/// core: on a 2-core machine two pooling jobs at once left the GUI thread waiting for a core (a
/// late paint after a result); jobs also run in the order they were started. The pool is a child
/// of the application, so it finishes its jobs before the application is gone.
inline QThreadPool* backgroundThreadPool() {
    static QPointer<QThreadPool> pool;
    if (!pool) {
        pool = new QThreadPool(QCoreApplication::instance());
        pool->setMaxThreadCount(1);
        pool->setObjectName(QStringLiteral("attnscope views background"));
    }
    return pool;
}

/// Runs `work` on backgroundThreadPool() and calls `done` with its value on `context`'s thread, unless
/// `context` was destroyed first. `work` must touch only what it owns (captured shared_ptrs to
/// immutable results, plain values); a throwing `work` answers T{}. The returned future lets the
/// caller block for the value (exports); `done` still runs once, later.
template <typename T>
QFuture<T> runInBackground(QObject* context, std::function<T()> work, std::function<void(T)> done) {
    auto promise = std::make_shared<QPromise<T>>();
    QFuture<T> future = promise->future();
    promise->start();
    backgroundThreadPool()->start([promise, work = std::move(work)] {
        T value{};
        try {
            value = work();
        } catch (const std::exception&) {
            value = T{};  // out of memory, typically: the caller shows nothing
        }
        promise->addResult(std::move(value));
        promise->finish();
    });
    auto* watcher = new QFutureWatcher<T>(context);
    QObject::connect(watcher, &QFutureWatcherBase::finished, context, [watcher, done = std::move(done)] {
        watcher->deleteLater();
        done(watcher->future().result());
    });
    watcher->setFuture(future);
    return future;
}

}  // namespace attnscope::views
