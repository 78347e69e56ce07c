#pragma once
// Plain-data work for a view on a worker thread (the global QThreadPool), answered on the view's
// thread: long heads are pooled this way so the GUI thread never does it.

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QThreadPool>

#include <exception>
#include <functional>
#include <memory>
#include <utility>

namespace attnscope::views {

/// Runs `work` on a worker thread and calls `done` with its value on `context`'s thread, unless
/// `context` was destroyed first. `work` must touch only what it owns (captured shared_ptrs to
/// immutable results, plain values); a throwing `work` answers T{}. The returned future lets the
/// caller block for the value (exports); `done` still runs once, later.
template <typename T>
QFuture<T> runInBackground(QObject* context, std::function<T()> work, std::function<void(T)> done) {
    auto promise = std::make_shared<QPromise<T>>();
    QFuture<T> future = promise->future();
    promise->start();
    QThreadPool::globalInstance()->start([promise, work = std::move(work)] {
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
