#pragma once
// Hands a result from the engine thread to the GUI thread.

#include <QCoreApplication>
#include <QMetaObject>

namespace attnscope::app {

/// Queues `fn` on the GUI thread. The application object outlives every job and source, so
/// posting to it is safe while the sender is being destroyed; `fn` checks its own QPointer.
template <class Fn>
void toGui(Fn fn) {
    QMetaObject::invokeMethod(QCoreApplication::instance(), std::move(fn), Qt::QueuedConnection);
}

}  // namespace attnscope::app
