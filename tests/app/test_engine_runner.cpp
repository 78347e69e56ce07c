#include "app/fake_backend.h"
#include "support/qt_test_support.h"

#include "gui/engine/engine_runner.h"

#include <QSignalSpy>
#include <QTest>

using attnscope::app::EngineRunner;
using attnscope::testing::FakeBackend;
namespace engine = attnscope::engine;

namespace {

engine::RunRequest tagged(std::uint64_t tag) {
    engine::RunRequest request;
    request.projection.seed = tag;
    return request;
}

constexpr int kCancelled = static_cast<int>(engine::ErrorCode::Cancelled);

// Signals from the engine thread arrive through the event loop: give stale ones time to show up.
void settle() { QTest::qWait(100); }

}  // namespace

class TestEngineRunner : public QObject {
    Q_OBJECT
private:
    std::shared_ptr<FakeBackend::Control> m_control;
    std::unique_ptr<EngineRunner> m_runner;

private Q_SLOTS:
    void init() {
        m_control = std::make_shared<FakeBackend::Control>();
        m_runner = std::make_unique<EngineRunner>(std::make_unique<FakeBackend>(m_control));
    }

    void cleanup() {
        m_control->releaseEverything();  // a backend ignoring cancel would otherwise block the join
        m_runner.reset();
    }

    void newerRequestSupersedesTheRunningOne() {
        QSignalSpy finished(m_runner.get(), &EngineRunner::runFinished);
        QSignalSpy failed(m_runner.get(), &EngineRunner::jobFailed);
        const quint64 first = m_runner->requestRun(tagged(1));
        QTRY_VERIFY(m_control->hasStarted(1));
        const quint64 second = m_runner->requestRun(tagged(2));
        QVERIFY(second > first);
        QCOMPARE(m_runner->latestRunJob(), second);

        QTRY_VERIFY(m_control->sawCancel(1));  // its cancel flag reached the backend
        QTRY_VERIFY(m_control->hasStarted(2));
        m_control->release(2);
        QTRY_COMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toULongLong(), second);
        QCOMPARE(finished.at(0).at(1).value<std::shared_ptr<const engine::RunResult>>()->n, 2);
        settle();
        QCOMPARE(finished.count(), 1);
        QCOMPARE(failed.count(), 0);  // the first job's Cancelled error is stale: dropped
        QVERIFY(!m_runner->isRunning());
    }

    void newerRequestReplacesTheQueuedOne() {
        m_control->ignoreCancel = true;
        QSignalSpy finished(m_runner.get(), &EngineRunner::runFinished);
        QSignalSpy failed(m_runner.get(), &EngineRunner::jobFailed);
        m_runner->requestRun(tagged(1));
        QTRY_VERIFY(m_control->hasStarted(1));
        m_runner->requestRun(tagged(2));                        // queued behind 1
        const quint64 third = m_runner->requestRun(tagged(3));  // replaces 2 in the queue
        m_control->release(1);
        QTRY_VERIFY(m_control->hasStarted(3));
        m_control->release(3);
        QTRY_COMPARE(finished.count(), 1);
        settle();
        QCOMPARE(m_control->startedTags(), (std::vector<std::uint64_t>{1, 3}));  // 2 never ran
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toULongLong(), third);
        QCOMPARE(failed.count(), 0);
    }

    void staleResultsAreDropped() {
        // The backend finishes job 1 with a result despite the cancel; it arrives after job 2
        // was requested and must never reach listeners.
        m_control->ignoreCancel = true;
        QSignalSpy finished(m_runner.get(), &EngineRunner::runFinished);
        QSignalSpy failed(m_runner.get(), &EngineRunner::jobFailed);
        QSignalSpy progress(m_runner.get(), &EngineRunner::progressChanged);
        const quint64 first = m_runner->requestRun(tagged(1));
        QTRY_VERIFY(m_control->hasStarted(1));
        const quint64 second = m_runner->requestRun(tagged(2));
        QTRY_VERIFY(m_control->sawCancel(1));
        progress.clear();
        m_control->release(1);
        QTRY_VERIFY(m_control->hasStarted(2));
        settle();
        QCOMPARE(finished.count(), 0);  // job 1's result was dropped
        for (const auto& args : progress) QCOMPARE(args.at(0).toULongLong(), second);
        m_control->release(2);
        QTRY_COMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toULongLong(), second);
        QVERIFY(finished.at(0).at(0).toULongLong() != first);
        QCOMPARE(failed.count(), 0);
    }

    void cancelReportsCancelledOnce() {
        QSignalSpy finished(m_runner.get(), &EngineRunner::runFinished);
        QSignalSpy failed(m_runner.get(), &EngineRunner::jobFailed);
        const quint64 job = m_runner->requestRun(tagged(7));
        QTRY_VERIFY(m_control->hasStarted(7));
        QVERIFY(m_runner->isRunning());
        m_runner->cancel();
        QTRY_COMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toULongLong(), job);
        QCOMPARE(failed.at(0).at(2).toInt(), kCancelled);
        QVERIFY(m_control->sawCancel(7));
        QVERIFY(!m_runner->isRunning());
        m_runner->cancel();  // nothing running: no second signal
        settle();
        QCOMPARE(failed.count(), 1);
        QCOMPARE(finished.count(), 0);
    }

    void cancelAfterTheBackendFinishedAnywayStillCancels() {
        m_control->ignoreCancel = true;
        QSignalSpy finished(m_runner.get(), &EngineRunner::runFinished);
        QSignalSpy failed(m_runner.get(), &EngineRunner::jobFailed);
        const quint64 job = m_runner->requestRun(tagged(4));
        QTRY_VERIFY(m_control->hasStarted(4));
        m_runner->cancel();
        QTRY_VERIFY(m_control->sawCancel(4));
        m_control->release(4);
        QTRY_COMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toULongLong(), job);
        QCOMPARE(failed.at(0).at(2).toInt(), kCancelled);
        settle();
        QCOMPARE(finished.count(), 0);
    }

    void cancelOfAQueuedJobAnswersWithoutRunningIt() {
        m_control->ignoreCancel = true;
        QSignalSpy failed(m_runner.get(), &EngineRunner::jobFailed);
        QSignalSpy finished(m_runner.get(), &EngineRunner::runFinished);
        m_runner->requestRun(tagged(1));
        QTRY_VERIFY(m_control->hasStarted(1));
        const quint64 queued = m_runner->requestRun(tagged(2));
        m_runner->cancel();
        QTRY_COMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toULongLong(), queued);
        QCOMPARE(failed.at(0).at(2).toInt(), kCancelled);
        m_control->release(1);
        settle();
        QCOMPARE(m_control->startedTags(), std::vector<std::uint64_t>{1});
        QCOMPARE(failed.count(), 1);
        QCOMPARE(finished.count(), 0);
    }

    void variantsComeFromTheEngineThread() {
        QSignalSpy loaded(m_runner.get(), &EngineRunner::variantsLoaded);
        const quint64 job = m_runner->requestVariants();
        QTRY_COMPARE(loaded.count(), 1);
        QCOMPARE(loaded.at(0).at(0).toULongLong(), job);
        const auto variants = loaded.at(0).at(1).value<std::vector<engine::VariantInfo>>();
        QCOMPARE(variants.size(), std::size_t{1});
        QCOMPARE(variants[0].id, std::string("fake"));
    }
};

ATTNSCOPE_REGISTER_QT_TEST(TestEngineRunner)
#include "test_engine_runner.moc"
